"""Launches written in Python: engine constructors and from_pretrained calls, VLLM_* variables put
into an environment, and command lines held in argv lists or strings (subprocess, os.system).

Computed once per module (every configuration rule asks) and kept on the ModuleIndex.
"""

from __future__ import annotations

import shlex

import libcst as cst

from errkb.lint.analysis import UNKNOWN, ModuleIndex, QualName, _Walker
from errkb.lint.launch import Launch, Setting, env_launch, framework_launches, launcher, parse_options
from errkb.lint.pyfacts import MAX_SPLICED

# calls whose keyword arguments are engine settings (names read from vllm 0.6-0.34, sglang 0.3-0.5.23)
VLLM_CALLS = frozenset({
    "vllm.LLM", "vllm.entrypoints.llm.LLM",
    "vllm.EngineArgs", "vllm.engine.arg_utils.EngineArgs",
    "vllm.AsyncEngineArgs", "vllm.engine.arg_utils.AsyncEngineArgs",
})
VLLM_ATTENTION_CONFIG = frozenset({"vllm.config.AttentionConfig", "vllm.config.attention.AttentionConfig"})
SGLANG_CALLS = frozenset({
    "sglang.Engine", "sglang.srt.entrypoints.engine.Engine", "sglang.Runtime",
    "sglang.srt.server_args.ServerArgs",
})
_TRANSFORMERS_LOADERS = ("from_pretrained", "from_config")
# classes whose loaders take attn_implementation without checking it: a configuration stores it
# (PretrainedConfig.__init__, 4.50.0.dev0 and 5.25.0), tokenizers and processors ignore it
_NOT_MODELS = ("Config", "Configuration", "Tokenizer", "TokenizerFast", "Processor", "FeatureExtractor")
_ENV_SETTERS = ("setdefault", "putenv", "setenv", "__setitem__")

# Training machinery whose mixed precision decides the dtype FlashAttention gets (EKB802): the
# packages screen.py resolves calls in, and which of their names count.
MIXED_PRECISION_FAMILIES = ("accelerate", "transformers", "trl", "deepspeed", "torch")
_HF_TRAINING = frozenset({"TrainingArguments", "Seq2SeqTrainingArguments", "HfArgumentParser"})
AUTOCAST = frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast",
                      "torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"})


def mixed_precision_kind(qualname: str) -> str | None:
    """'accelerate' for accelerate's Accelerator, 'args' for transformers' TrainingArguments,
    Seq2SeqTrainingArguments, HfArgumentParser and TRL's *Config and *Parser classes (their
    precision is `bf16`/`fp16`), 'deepspeed' for any DeepSpeed name, 'autocast' for torch's
    autocast (a forward run under it anywhere in the module), 'fsdp' for FSDP's mixed-precision
    settings (FSDP2's MixedPrecisionPolicy, FSDP1's MixedPrecision: `param_dtype`); None
    otherwise. Trainers are not counted: their precision is the arguments they are given."""
    if qualname in AUTOCAST:
        return "autocast"
    top, _, rest = qualname.partition(".")
    last = qualname.rsplit(".", 1)[-1]
    if top == "accelerate" and last == "Accelerator":
        return "accelerate"
    if (top == "transformers" and last in _HF_TRAINING) or (
            top == "trl" and rest and last.endswith(("Config", "Parser"))):
        return "args"
    if top == "deepspeed":
        return "deepspeed"
    if top == "torch" and rest.startswith("distributed.") and last in ("MixedPrecisionPolicy", "MixedPrecision"):
        return "fsdp"
    return None


def python_launches(index: ModuleIndex) -> list[Launch]:
    got = getattr(index, "_errkb_launches", None)
    if got is None:
        got = _collect(index)
        index._errkb_launches = got
    return got


def _setting_value(index: ModuleIndex, expr: cst.BaseExpression, scope) -> object:
    v = index.value(expr, scope)
    if isinstance(v, QualName):
        return v
    return v if v is None or type(v) in (int, float, str, bool) else UNKNOWN


def _call_launch(index: ModuleIndex, site, tool: str) -> Launch:
    args = index.bind_args(site)
    launch = Launch(tool, "python")
    for name, (expr, scope, node) in args.given.items():
        launch.settings[name] = Setting(_setting_value(index, expr, scope), node, name)
        if name == "attention_config":
            backend = _attention_config_backend(index, expr, scope)
            if backend is not None:
                launch.settings["attention_config.backend"] = Setting(
                    _setting_value(index, backend[0], backend[1]), backend[2], "attention_config")
    return launch


def _attention_config_backend(index: ModuleIndex, expr, scope):
    """The `backend` of attention_config={...} / dict(...) / AttentionConfig(backend=...)."""
    items = index.dict_items(expr, scope)
    if items is not None:
        for key, value, vscope in items:
            if key == "backend":
                return value, vscope, value
        return None
    if isinstance(expr, cst.Call) and index.resolve(expr.func, scope) <= VLLM_ATTENTION_CONFIG \
            and index.resolve(expr.func, scope):
        for a in expr.args:
            if a.keyword is not None and a.keyword.value == "backend":
                return a.value, scope, a
    return None


def _imports_transformers(index: ModuleIndex) -> bool:
    """Whether any scope of the module imports from transformers (imports in functions count)."""
    scopes = {id(site.scope): site.scope for site in index.calls}
    scopes[id(index.root)] = index.root
    return any(b.kind == "import" and b.qualname.split(".")[0] == "transformers"
               for s in scopes.values() for bs in s.bindings.values() for b in bs)


def _model_loader(target: str) -> bool:
    """`transformers.<Class>.from_pretrained/from_config` of a model class (not a configuration,
    tokenizer or processor, which never check attn_implementation)."""
    parts = target.split(".")
    return (parts[0] == "transformers" and len(parts) > 2 and parts[-1] in _TRANSFORMERS_LOADERS
            and not parts[-2].endswith(_NOT_MODELS))


def _collect(index: ModuleIndex) -> list[Launch]:
    launches: list[Launch] = []
    uses_transformers = None
    for site in index.calls:
        targets = index.targets(site) or index.subclassed(site)
        if targets and targets <= VLLM_CALLS:
            launches.append(_call_launch(index, site, "vllm"))
        elif targets and targets <= SGLANG_CALLS:
            launches.append(_call_launch(index, site, "sglang"))
        elif targets and all(_model_loader(t) for t in targets):
            launches.append(_call_launch(index, site, "transformers"))
        elif isinstance(site.node.func, cst.Attribute) and site.node.func.attr.value == "set_attn_implementation":
            if uses_transformers is None:
                uses_transformers = _imports_transformers(index)
            if uses_transformers and site.node.args and site.node.args[0].keyword is None:
                arg = site.node.args[0]
                launches.append(Launch("transformers", "python", {"attn_implementation": Setting(
                    _setting_value(index, arg.value, site.scope), arg, "set_attn_implementation")}))
    walker = _LiteralWalker(_module_lists(index.tree))
    walker.walk(index.tree)
    launches.extend(walker.launches)
    return launches


def _is_sys_executable(node) -> bool:
    """`sys.executable`, which starts a launcher list as often as "python" (lint/pyfacts.py reads
    it the same way for the screen)."""
    return (isinstance(node, cst.Attribute) and node.attr.value == "executable"
            and isinstance(node.value, cst.Name) and node.value.value == "sys")


def _string(node) -> str | None:
    if isinstance(node, cst.SimpleString):
        try:
            v = node.evaluated_value
        except Exception:
            return None
        return v if isinstance(v, str) else None
    return None


def _module_lists(tree: cst.Module) -> dict[str, cst.List | cst.Tuple]:
    """Module-level names bound once, to a list or tuple literal (`SERVER_FLAGS = [...]`), whose
    words a command line may splice in (`[...] + SERVER_FLAGS`, `[*SERVER_FLAGS, ...]`). A name
    bound twice, augmented or bound to anything else at module level is left unknown."""
    bound: dict[str, list] = {}
    for stmt in tree.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                for t in small.targets:
                    if isinstance(t.target, cst.Name):
                        bound.setdefault(t.target.value, []).append(small.value)
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)) and isinstance(small.target, cst.Name):
                bound.setdefault(small.target.value, []).append(small.value)
    return {name: values[0] for name, values in bound.items()
            if len(values) == 1 and isinstance(values[0], (cst.List, cst.Tuple))
            and len(values[0].elements) <= MAX_SPLICED}


class _LiteralWalker(_Walker):
    """VLLM_* keys put into mappings or environments, and command lines in lists and strings
    (lists joined with `+` or spliced with `*` read as one, where the pieces are literals or
    module-level lists: `_module_lists`)."""

    def __init__(self, lists: dict[str, cst.List | cst.Tuple]) -> None:
        self.launches: list[Launch] = []
        self._lists = lists
        self._joined: set[int] = set()  # lists and `+` nodes read as part of a larger command line
        self._checked: set[int] = set()  # strings and lists a comparison or an assert* call checks

    def _env(self, key_node, value_node, anchor) -> None:
        name = _string(key_node)
        if name is None:
            return
        value = _string(value_node)
        got = env_launch(name, value if value is not None else UNKNOWN, anchor)
        if got is not None:
            self.launches.append(got)

    def visit_Assign(self, node: cst.Assign) -> None:  # env["VLLM_X"] = "..."
        for t in node.targets:
            target = t.target
            if isinstance(target, cst.Subscript) and len(target.slice) == 1 \
                    and isinstance(target.slice[0].slice, cst.Index):
                self._env(target.slice[0].slice.value, node.value, target)

    def visit_DictElement(self, node: cst.DictElement) -> None:  # {"VLLM_X": "..."}
        self._env(node.key, node.value, node)

    def _checked_value(self, node) -> None:
        """A value compared or asserted (`"--x fa3" in cmd`, `cmd == [...]`, `assertIn("...", cmd)`)
        is what a test expects some other code to run, not a command of this file (the
        twenty-fifth held-out round)."""
        while isinstance(node, cst.ConcatenatedString):
            self._checked.add(id(node.right))
            node = node.left
        self._checked.add(id(node))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._checked_value(node.left)
        for target in node.comparisons:
            self._checked_value(target.comparator)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value.startswith("assert"):  # unittest's assertIn, ...
            for a in node.args:
                self._checked_value(a.value)
        for a in node.args:  # dict(os.environ, VLLM_X="..."), os.environ.update(VLLM_X=...)
            if a.keyword is not None and a.keyword.value.startswith("VLLM_"):
                got = env_launch(a.keyword.value, _string(a.value) or UNKNOWN, a)
                if got is not None:
                    self.launches.append(got)
        if isinstance(func, cst.Attribute) and func.attr.value in _ENV_SETTERS and len(node.args) >= 2:
            self._env(node.args[0].value, node.args[1].value, node.args[0])  # os.environ.setdefault, monkeypatch.setenv

    def visit_List(self, node: cst.List) -> None:
        self._argv(node)

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self._argv(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:  # [python, -m, X] + FLAGS
        if id(node) in self._joined or id(node) in self._checked or not isinstance(node.operator, cst.Add):
            return
        parts: list = []
        words = self._words(node, parts, 0)
        if words is None:
            return
        found = launcher([w if isinstance(w, str) else "" for w, _ in words])
        if found:
            self._joined.update(id(p) for p in parts)
            self.launches.append(parse_options(found[0], words, found[1], found[2]))

    def _words(self, node, parts: list, depth: int) -> list | None:
        """The (value, anchor) words of a list, a tuple, a module-level list's name, or a `+` of
        them; None for anything else. `parts` gathers the list and `+` nodes read."""
        if depth > 8:
            return None
        if isinstance(node, cst.Name) and node.value in self._lists:
            return self._words(self._lists[node.value], parts, depth + 1)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            left, right = self._words(node.left, parts, depth + 1), self._words(node.right, parts, depth + 1)
            if left is None and right is None:
                return None
            parts.append(node)
            return (left if left is not None else [(UNKNOWN, node.left)]) + \
                (right if right is not None else [(UNKNOWN, node.right)])
        if not isinstance(node, (cst.List, cst.Tuple)):
            return None
        parts.append(node)
        words = []
        for el in node.elements:
            if isinstance(el, cst.StarredElement):
                spliced = self._words(el.value, parts, depth + 1) if isinstance(el.value, cst.Name) else None
                words.extend(spliced if spliced is not None else [(UNKNOWN, el)])
            else:
                v = "python" if _is_sys_executable(el.value) else _string(el.value)
                words.append((v if v is not None else UNKNOWN, el.value))
        return words

    def _argv(self, node) -> None:
        if id(node) in self._joined or id(node) in self._checked:
            return
        words = self._words(node, [], 0)
        found = launcher([w if isinstance(w, str) else "" for w, _ in words])
        if found:
            self.launches.append(parse_options(found[0], words, found[1], found[2]))
        else:  # a framework's argv list that passes engine arguments on (["--sglang-attention-backend", "fa3"])
            self.launches.extend(framework_launches(words))

    def visit_Expr(self, node: cst.Expr) -> bool:
        # a bare string statement is a docstring or a comment: not a command
        return not isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:  # "vllm serve ... --attention-backend X"
        text = _string(node)
        if text is None or ("vllm" not in text and "sglang" not in text) or "\n" in text.strip() \
                or id(node) in self._checked:
            return
        try:
            values = shlex.split(text, comments=False)
        except ValueError:
            return
        found = launcher(values)
        if found:
            self.launches.append(parse_options(found[0], [(v, node) for v in values], found[1], found[2]))
        else:  # a framework's options in a string ("--sglang-attention-backend fa3 "; the twenty-third round)
            self.launches.extend(framework_launches([(v, node) for v in values]))


__all__ = ["python_launches"]
