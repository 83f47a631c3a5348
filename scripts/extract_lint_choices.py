"""Regenerate data/lint/choices.json from downloaded vLLM, SGLang and transformers wheels.

The configuration lint rules (lint/rules_config_*.py) check backend names against the names each
release accepts. Those names are read here from each release's own code, with `ast` (nothing is
imported or run), and stored with the release and the file they came from:

    mkdir -p /tmp/dl && cd /tmp/dl
    pip download --no-deps vllm==0.11.0 sglang==0.5.10 transformers==4.56.0 -d .   # one per release
    .venv/bin/python scripts/extract_lint_choices.py /tmp/dl [--out data/lint/choices.json]

Wheels are read in place (zipfile), and so are source distributions (`PKG-VER.tar.gz`, for releases
whose wheels were not downloaded); nothing from them is written except the extracted names.
A fact a release does not have is left out of that release's table (absent, not empty).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import tarfile
import zipfile
from pathlib import Path

_WHEEL = re.compile(r"^(vllm|sglang|transformers)-([0-9][^-]*?)(?:-|\.tar\.gz$)")


def version_key(v: str) -> tuple:
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[.+]", v.replace("post", "")))


# ------------------------------------------------------------------ ast helpers


def strings(node: ast.AST | None) -> list[str] | None:
    """A list/tuple/set of string constants, or Literal["a", "b"]; None for anything else."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute)):
        node = node.slice
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        out = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return out if len(out) == len(node.elts) else None
    return None


def assignments(tree: ast.AST) -> dict[str, ast.AST]:
    """name -> assigned value, for every plain or annotated assignment anywhere in the tree."""
    out: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out[node.target.id] = node.value
    return out


def keyword(call: ast.Call, name: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def resolve_strings(node: ast.AST | None, names: dict[str, ast.AST]) -> list[str] | None:
    """Strings of a literal, of a name bound to one, or of `a + b` of those."""
    if isinstance(node, ast.Name) and node.id in names:
        node = names[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = resolve_strings(node.left, names), resolve_strings(node.right, names)
        return None if left is None or right is None else left + right
    return strings(node)


class Release:
    """The Python files of one wheel (or source distribution), parsed on demand."""

    def __init__(self, wheel: Path) -> None:
        if wheel.name.endswith(".tar.gz"):  # sdist: PKG-VER/<package>/...; read the Python files once
            with tarfile.open(wheel) as tar:
                self._files = {m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar.getmembers()
                               if m.isfile() and m.name.endswith(".py") and "/" in m.name}
        else:
            with zipfile.ZipFile(wheel) as zf:
                self._files = {n: zf.read(n) for n in zf.namelist() if n.endswith(".py")}
        self.names = set(self._files)
        self._trees: dict[str, ast.AST] = {}

    def tree(self, path: str) -> ast.AST | None:
        if path not in self.names:
            return None
        if path not in self._trees:
            self._trees[path] = ast.parse(self._files[path])
        return self._trees[path]

    def files(self, prefix: str) -> list[str]:
        return sorted(n for n in self.names if n.startswith(prefix) and n.endswith(".py"))

    def text(self, path: str) -> str:
        return self._files[path].decode() if path in self.names else ""


def argparse_choices(rel: Release, paths: list[str], flag: str, names: dict) -> tuple[list[str], str] | None:
    """`choices=` of add_argument(flag, ...) or of a dataclass field declared with Arg(choices=...)."""
    field = flag.lstrip("-").replace("-", "_")
    for path in paths:
        tree = rel.tree(path)
        if tree is None:
            continue
        local = {**names, **assignments(tree)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                    and node.args[0].value == flag:
                got = resolve_strings(keyword(node, "choices"), local)
                if got:
                    return got, path
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == field:
                for call in ast.walk(node.annotation):
                    if isinstance(call, ast.Call) and keyword(call, "choices") is not None:
                        got = resolve_strings(keyword(call, "choices"), local)
                        if got:
                            return got, path
    return None


# ------------------------------------------------------------------ vLLM


# the environment variables and engine arguments the rules ask about (kept small on purpose)
WATCHED_ENV = {"VLLM_ATTENTION_BACKEND", "VLLM_FLASH_ATTN_VERSION", "VLLM_USE_TRTLLM_ATTENTION", "VLLM_USE_V1"}
_UNKNOWN_ENV = "Unknown vLLM environment variable detected"
WATCHED_ARGS = {"attention_backend", "attention_config", "kv_cache_dtype"}


def vllm_facts(rel: Release) -> dict:
    facts: dict = {}
    files = rel.files("vllm/")
    for path in files:  # the backend enum: _Backend (0.6-0.11) or AttentionBackendEnum (0.12+)
        if "class _Backend" not in rel.text(path) and "class AttentionBackendEnum" not in rel.text(path):
            continue
        for node in ast.walk(rel.tree(path)):
            if isinstance(node, ast.ClassDef) and node.name in ("_Backend", "AttentionBackendEnum"):
                members = [t.id for stmt in node.body if isinstance(stmt, ast.Assign)
                           for t in stmt.targets if isinstance(t, ast.Name) and t.id.isupper()]
                if members:
                    facts["attention_backend"] = {"choices": members, "source": f"{path} ({node.name})"}
        if "attention_backend" in facts:
            break
    envs = rel.tree("vllm/envs.py")
    if envs is not None:
        known = set()
        for node in ast.walk(envs):
            if isinstance(node, ast.Dict):
                known |= {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        facts["env_vars"] = {"choices": sorted(k for k in known if k in WATCHED_ENV), "source": "vllm/envs.py"}
        # whether a VLLM_* variable the release does not know is reported (a warning, or an error with
        # --fail-on-environ-validation); where it is not, such a variable is ignored silently
        where = next((p for p in ("vllm/envs.py", "vllm/platforms/interface.py") if _UNKNOWN_ENV in rel.text(p)), None)
        facts["warns_unknown_env"] = {"value": where is not None, "source": where or "vllm/envs.py"}
    arg_utils = rel.tree("vllm/engine/arg_utils.py")
    if arg_utils is not None:
        fields = {n.target.id for c in ast.walk(arg_utils) if isinstance(c, ast.ClassDef) and c.name == "EngineArgs"
                  for n in c.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        facts["engine_args"] = {"choices": sorted(fields & WATCHED_ARGS), "source": "vllm/engine/arg_utils.py (EngineArgs)"}
    kv = argparse_choices(rel, ["vllm/engine/arg_utils.py"], "--kv-cache-dtype", {})
    if kv is None:
        for path in files:
            if path.startswith("vllm/config") and "CacheDType" in rel.text(path):
                got = strings(assignments(rel.tree(path)).get("CacheDType"))
                if got:
                    kv = got, f"{path} (CacheDType)"
                    break
    if kv:
        facts["kv_cache_dtype"] = {"choices": kv[0], "source": kv[1]}
    if "attention_backend" in facts:  # how a name is looked up: upper-cased (0.13+ flag) or as written
        config = "vllm/config/attention.py"
        facts["case_insensitive"] = {"value": bool(_UPPER.search(rel.text(config))), "source": config}
        facts["auto_accepted"] = {"value": bool(_AUTO.search(rel.text(config))), "source": config}
        selector = next((p for p in files if p.endswith("attention/selector.py")), "")
        suffix = _SUFFIX.search(rel.text(selector))
        if suffix:  # 0.11: VLLM_ATTENTION_BACKEND=FLASH_ATTN_VLLM_V1 is accepted without the suffix
            facts["env_suffix_dropped"] = {"value": suffix.group(1), "source": selector}
    return facts


_UPPER = re.compile(r"AttentionBackendEnum\[\w+\.upper\(\)\]")
_AUTO = re.compile(r"\.lower\(\)\s*==\s*[\"']auto[\"']")
_SUFFIX = re.compile(r"removesuffix\(\s*[\"'](\w+)[\"']")


# ------------------------------------------------------------------ SGLang

_SGL_DEPRECATED = re.compile(r"attention-backend='(\w+)' is deprecated; use '(\w+)'")


def sglang_facts(rel: Release) -> dict:
    facts: dict = {}
    paths = ["sglang/srt/server_args.py", *rel.files("sglang/srt/arg_groups/")]
    names: dict[str, ast.AST] = {}
    for p in paths:
        if rel.tree(p) is not None:
            names.update(assignments(rel.tree(p)))
    for flag, key in (("--attention-backend", "attention_backend"),
                      ("--mm-attention-backend", "mm_attention_backend"),
                      ("--kv-cache-dtype", "kv_cache_dtype")):
        got = argparse_choices(rel, paths, flag, names)
        if got:
            facts[key] = {"choices": got[0], "source": got[1]}
    aliases: dict[str, str] = {}
    registry = "sglang/srt/layers/attention/attention_registry.py"
    for old, new in _SGL_DEPRECATED.findall(rel.text(registry)):
        aliases[old] = new
    for p in paths:  # a dict literal named `aliases` mapping old backend names to new ones
        tree = rel.tree(p)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "aliases" for t in node.targets) \
                    and isinstance(node.value, ast.Dict):
                for k, v in zip(node.value.keys, node.value.values):
                    if isinstance(k, ast.Constant) and isinstance(v, ast.Constant):
                        aliases[str(k.value)] = str(v.value)
    if aliases:
        facts["deprecated_aliases"] = {"map": dict(sorted(aliases.items())), "source": registry}
    return facts


# ------------------------------------------------------------------ transformers


def transformers_facts(rel: Release) -> dict:
    path = "transformers/modeling_utils.py"
    tree = rel.tree(path)
    if tree is None:
        return {}
    names = assignments(tree)
    # keys of dicts: ALL_ATTENTION_FUNCTIONS = {...} / .update({...}) (4.48), AttentionInterface._global_mapping (4.52+)
    dict_keys: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Dict) \
                        and any(isinstance(t, ast.Name) and t.id == "_global_mapping" for t in stmt.targets):
                    dict_keys[node.name] = [k.value for k in stmt.value.keys if isinstance(k, ast.Constant)]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update" \
                and isinstance(node.func.value, ast.Name) and node.args and isinstance(node.args[0], ast.Dict):
            dict_keys.setdefault(node.func.value.id, []).extend(
                k.value for k in node.args[0].keys if isinstance(k, ast.Constant))

    def registry_keys(expr: ast.AST) -> list[str] | None:
        # list(X.keys()) or X.valid_keys(), X a dict or an instance of a class with _global_mapping
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "list" and expr.args:
            expr = expr.args[0]
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
                and isinstance(expr.func.value, ast.Name):
            name = expr.func.value.id
            if name in dict_keys:
                return dict_keys[name]
            ctor = names.get(name)
            if isinstance(ctor, ast.Call) and isinstance(ctor.func, ast.Name) and ctor.func.id in dict_keys:
                return dict_keys[ctor.func.id]
        return None

    accepted: set[str] = set()
    for node in ast.walk(tree):  # `<impl> not in [...]` right before 'is not supported'
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.NotIn)):
            continue
        right = node.comparators[0]
        parts = [right.left, right.right] if isinstance(right, ast.BinOp) and isinstance(right.op, ast.Add) else [right]
        got = []
        for part in parts:
            s = strings(part)
            s = s if s is not None else registry_keys(part)
            if s is None:
                break
            got.extend(s)
        else:
            if "eager" in got:
                accepted |= set(got)
    facts: dict = {}
    if accepted:
        facts["attn_implementation"] = {"choices": sorted(accepted), "source": path}
    facts["hub_kernels"] = {"value": "def is_kernel" in rel.text("transformers/integrations/hub_kernels.py"),
                            "source": "transformers/integrations/hub_kernels.py (is_kernel)"}
    return facts


EXTRACTORS = {"vllm": vllm_facts, "sglang": sglang_facts, "transformers": transformers_facts}


def extract(folder: Path) -> dict:
    out: dict = {}
    for wheel in sorted([*folder.rglob("*.whl"), *folder.rglob("*.tar.gz")]):
        m = _WHEEL.match(wheel.name)
        if not m:
            continue
        package, version = m.groups()
        facts = EXTRACTORS[package](Release(wheel))
        out.setdefault(package, {})[version] = {"read_from": wheel.name, **facts}
    return {pkg: dict(sorted(rels.items(), key=lambda kv: version_key(kv[0]))) for pkg, rels in sorted(out.items())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="folder holding the downloaded wheels")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "data/lint/choices.json")
    args = ap.parse_args(argv)
    releases = extract(args.folder)
    if not releases:
        print(f"no vllm/sglang/transformers wheels under {args.folder}", file=sys.stderr)
        return 2
    doc = {"about": "Backend names each release accepts, read from its own code by "
                    "scripts/extract_lint_choices.py; used by the configuration lint rules.",
           "releases": releases}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=1)
    text = re.sub(r"\[\n\s*([^\[\]{}]*?)\n\s*\]", lambda m: "[" + re.sub(r",\n\s*", ", ", m.group(1)) + "]", text)
    args.out.write_text(text + "\n")
    for pkg, rels in releases.items():
        print(f"{pkg}: {', '.join(rels)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
