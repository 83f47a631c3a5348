"""The stages between the byte prefilter and libcst (lint/screen.py, lint/narrow.py) never change
a result: every case is linted with them on and off, and the findings (positions and fixes
included) and skip reasons must be the same. The cases are every rule's VALID and INVALID
examples, the same examples inside padding, methods and nested functions (where narrowing
blanks the other bodies), and constructs that narrowing must get right."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest

from errkb import store
from errkb.lint import engine, narrow, screen
from errkb.lint.engine import lint_source, load_record_texts
from errkb.lint.pyfacts import ModuleFacts
from errkb.lint.rule import Example, Rule, all_rules

RULES = all_rules()
ALL = [cls() for cls in RULES.values()]
ARCHS = ("sm80", "sm90", "sm100", "sm120")


@pytest.fixture(scope="module")
def texts():
    return load_record_texts(store.default_data_dir())


def _examples():
    for code, cls in RULES.items():
        for kind in ("VALID", "INVALID"):
            for i, ex in enumerate(getattr(cls, kind)):
                ex = ex if isinstance(ex, Example) else Example(ex, findings=0)
                yield pytest.param(code, ex, id=f"{code}-{kind.lower()}-{i}")


EXAMPLES = list(_examples())
PY_EXAMPLES = [p for p in EXAMPLES if p.values[1].path.endswith(".py")]

_PAD_BEFORE = '''\
import os


def unrelated(a, b=os.sep):
    """Nothing here calls a kernel."""
    total = 0
    for i in range(a):
        total += i
    return total


class Holder:
    def __init__(self):
        self.value = 1

    def bump(self):
        self.value += 1
        return [x for x in range(self.value)]

'''
_PAD_AFTER = '''

def trailing():
    def inner():
        return 2
    return inner()
'''


def _wrapped_in_method(code: str) -> str:
    return ("class Wrapped:\n    def helper(self):\n        return 1\n\n    def run(self):\n"
            + textwrap.indent(code, " " * 8) + "\n\n    def other(self):\n        return 2\n")


def _nested(code: str) -> str:
    return ("def outer():\n    def skipped():\n        return 0\n\n    def inner():\n"
            + textwrap.indent(code, " " * 8) + "\n    return inner\n")


VARIANTS = {
    "as is": lambda code: code,
    "padded": lambda code: _PAD_BEFORE + code + _PAD_AFTER,
    "in a method": _wrapped_in_method,
    "nested": _nested,
}


def _both(source: str | bytes, texts, rules=ALL, path="example.py", archs=ARCHS, versions=None, **kw):
    data = source.encode() if isinstance(source, str) else source
    results = [lint_source(data, path, rules, archs, texts, module="example", versions=versions,
                           screen=on, **kw) for on in (False, True)]
    off, on = ([f.to_json() for f in r.findings] + [r.skipped] for r in results)
    return off, on


# launch-command files (scripts, YAML) do not go through the Python stages: linted as they are
CASES = [pytest.param(*p.values, variant, id=f"{p.id}-{variant}")
         for p in EXAMPLES for variant in VARIANTS if variant == "as is" or p.values[1].path.endswith(".py")]


@pytest.mark.parametrize("code,example,variant", CASES)
def test_examples_same_with_and_without_the_stages(code, example, variant, texts):
    source = VARIANTS[variant](example.code)
    off, on = _both(source, texts, ALL, example.path, example.archs, dict(example.versions))
    assert on == off, (variant, source)
    if variant == "as is" and example in RULES[code].INVALID:  # the rule's own finding is among them
        assert any(f["rule"] == code for f in on[:-1] if isinstance(f, dict)), on


@pytest.mark.parametrize("code,example", [p for p in PY_EXAMPLES if p.values[1] in RULES[p.values[0]].INVALID])
def test_the_screen_keeps_the_rule_of_every_invalid_example(code, example):
    """Stage two alone: the rule that reports on an example is among those left to run."""
    rule = next(r for r in ALL if r.CODE == code)
    for variant in VARIANTS.values():
        source = variant(example.code).encode()
        kept = screen.rules_that_may_report(ast.parse(source), source, ALL, "example", False)
        assert rule in kept


def test_narrowing_is_exercised_by_the_cases():
    """The padded and wrapped examples of the kernel rules do get a shorter source to parse (the
    comparisons above would otherwise say nothing about narrowing)."""
    shortened = 0
    for param in PY_EXAMPLES:
        code, example = param.values
        rule = next(r for r in ALL if r.CODE == code)
        if type(rule).run is not Rule.run or example not in RULES[code].INVALID:
            continue
        source = _wrapped_in_method(_PAD_BEFORE + example.code).encode()
        tree = ast.parse(source)
        facts = ModuleFacts(tree, "example", False)
        kept, regions, calls = screen.candidates(tree, source, [rule], "example", False, lambda: facts)
        assert kept == [rule]
        parsed = narrow.narrowed(source, narrow.plan(facts, regions, calls))
        if parsed is not None and len(parsed) < len(source):
            shortened += 1
            assert parsed.count(b"\n") == source.count(b"\n")
    assert shortened >= 10


_SDPA_CLASS = '''\
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

class Attention:
    def __init__(self):
        self.attn = F.scaled_dot_product_attention

    def unrelated(self, x):
        y = [i * 2 for i in range(x)]
        return sum(y)

    def forward(self, q, k, v, m):
        with sdpa_kernel(SDPBackend.MATH):  # EKB302 needs a math-only context
            return self.attn(q, k, v, attn_mask=m, is_causal=True)
'''

_FP8_LAYER = '''\
import torch
from flash_attn.cute import flash_attn_func


class Layer:
    def __init__(self):
        self.kv_dtype = torch.float8_e4m3fn

    def unrelated(self):
        self.other = 1
        return [self.other for _ in range(3)]

    def forward(self, q, k):
        v = torch.randn(2, 128, 8, 128).to(self.kv_dtype)
        return flash_attn_func(q, k, v)
'''

# EKB302 reports only where the context leaves the math kernel alone to take the mask
_MATH = "from torch.nn.attention import SDPBackend, sdpa_kernel\n"
_FA4_KV = "from sglang.kernels.ops.attention.flash_attention_v4 import flash_attn_with_kvcache\n"

# constructs narrowing must get right: each is linted with the stages on and off
TRICKY = {
    # the call resolves through a self attribute stored in another method (that method stays)
    "self attribute": (_SDPA_CLASS, 1),
    # a second store of None makes the attribute ambiguous: the storing method must stay too
    "self attribute also set to None": (_SDPA_CLASS + "\n    def reset(self):\n        self.attn = None\n", 0),
    # an alias at module level, the call in a function among others
    "module alias": ("import torch.nn.functional as F\nsdpa = F.scaled_dot_product_attention\n" + _MATH + "\n"
                     "def a():\n    return 1\n\ndef b(q, k, v, m):\n    with sdpa_kernel(SDPBackend.MATH):\n"
                     "        return sdpa(q, k, v, m, 0.0, True)\n", 1),
    # bodies on the header's line, a multi-line header ending on the body's line (EKB101: a `with`
    # cannot share the header's line), and a one-line `with` body
    "one-line bodies": ("import torch.nn.functional as F\n" + _MATH + _FA4_KV + "def a(): return 1\ndef b(q, k,\n      v, m): "
                        "return flash_attn_with_kvcache(q, k, v, k=m)\n"
                        "def c():\n    with sdpa_kernel(SDPBackend.MATH): "
                        "return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)\n", 2),
    # a decorated function first in a body that is blanked, and one that holds the call
    "decorated first statement": ("import functools\nimport torch.nn.functional as F\n" + _MATH + "\ndef outer():\n"
                                  "    @functools.lru_cache\n    def cached():\n        return 1\n    return cached\n\n"
                                  "def user(q, k, v, m):\n    @functools.wraps(user)\n    def inner():\n"
                                  "        with sdpa_kernel(SDPBackend.MATH):\n"
                                  "            return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)\n"
                                  "    return inner\n", 1),
    # a value from an enclosing function's binding
    "enclosing binding": ("import torch.nn.functional as F\n" + _MATH + "\ndef outer(q, k, v, m):\n    causal = True\n"
                          "    def other():\n        return 0\n    def inner():\n        with sdpa_kernel(SDPBackend.MATH):\n"
                          "            return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal)\n"
                          "    return inner()\n", 1),
    # a function-local import shadowing nothing, the call two functions down
    "local import": ("def first():\n    return 0\n\ndef second(q, k, v, m):\n"
                     "    from torch.nn.functional import scaled_dot_product_attention as sdpa\n"
                     "    from torch.nn.attention import SDPBackend, sdpa_kernel\n"
                     "    with sdpa_kernel(SDPBackend.MATH):\n        return sdpa(q, k, v, attn_mask=m, is_causal=True)\n", 1),
    # a suppression comment in the kept function
    "suppressed": ("import torch.nn.functional as F\n" + _MATH + "def a():\n    return 1\ndef b(q, k, v, m):\n"
                   "    with sdpa_kernel(SDPBackend.MATH):\n"
                   "        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)  # errkb: ignore\n", 0),
    # a dtype the analysis follows from an argument, through a local name, to a self attribute
    # stored in another method (that method stays, the unrelated one goes)
    "dtype through a name and self": (_FP8_LAYER, 1),
    "dtype through a name and self, also reset": (
        _FP8_LAYER + "\n    def reset(self):\n        self.kv_dtype = None\n", 0),
    # a self attribute stored from another self attribute, stored in a third method
    "self attribute chain": (
        "import torch.nn.functional as F\n" + _MATH + "\nclass A:\n    def __init__(self):\n        self.fn = self.impl\n\n"
        "    def setup(self):\n        self.impl = F.scaled_dot_product_attention\n\n"
        "    def unrelated(self):\n        self.other = 2\n\n    def forward(self, q, k, v, m):\n"
        "        with sdpa_kernel(SDPBackend.MATH):\n            return self.fn(q, k, v, attn_mask=m, is_causal=True)\n", 1),
    # the backend of the `with` around the call is a self attribute stored in __init__
    "with-item through self": (
        "import torch.nn.functional as F\nfrom torch.nn.attention import sdpa_kernel, SDPBackend\n\n"
        "class Attn:\n    def __init__(self):\n        self.backend = SDPBackend.FLASH_ATTENTION\n\n"
        "    def unrelated(self):\n        return 1\n\n    def forward(self, q, k, v, m):\n"
        "        with sdpa_kernel(self.backend):\n"
        "            return F.scaled_dot_product_attention(q, k, v, attn_mask=m)\n", 1),
    # CRLF line ends and a coding cookie: parsed whole
    "crlf": ("import torch.nn.functional as F\r\n" + _MATH.replace("\n", "\r\n") + "def a():\r\n    return 1\r\n"
             "def b(q, k, v, m):\r\n    with sdpa_kernel(SDPBackend.MATH):\r\n"
             "        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)\r\n", 1),
    "latin-1 cookie": ("# -*- coding: latin-1 -*-\nimport torch.nn.functional as F\n" + _MATH + "def a():\n    return 'caf\xe9'\n"
                       "def b(q, k, v, m):\n    with sdpa_kernel(SDPBackend.MATH):\n"
                       "        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)\n",
                       1),
}


_UNRELATED = "def unrelated(x):\n    y = [i for i in range(x)]\n    return sum(y)\n\n"

# the same for the configuration rules (launch_python reads the whole module: what must stay)
TRICKY_CONFIG = {
    # transformers imported only inside another function: set_attn_implementation still counts
    "transformers imported elsewhere": (
        "def load():\n    from transformers import AutoModel\n    return AutoModel.from_pretrained('m')\n\n"
        + _UNRELATED + "def setup(model):\n    model.set_attn_implementation('fa3')\n", 1),
    # a module that registers its own implementation in another function is not judged
    "AttentionInterface registered elsewhere": (
        "from transformers import AutoModelForCausalLM\n\ndef register():\n"
        "    from transformers import AttentionInterface\n    AttentionInterface.register('my_attn', f)\n\n"
        + _UNRELATED + "def load():\n    return AutoModelForCausalLM.from_pretrained('m', attn_implementation='my_attn')\n",
        0),
    "unknown implementation": (
        "from transformers import AutoModelForCausalLM\n\n" + _UNRELATED
        + "def load():\n    return AutoModelForCausalLM.from_pretrained('m', attn_implementation='my_attn')\n", 1),
    # an environment variable set in one function, an engine built in another
    "environment and engine": (
        "import os\nfrom vllm import LLM\n\ndef env():\n    os.environ['VLLM_ATTENTION_BACKEND'] = 'FLASH_ATTENTION'\n\n"
        + _UNRELATED + "class Server:\n    def __init__(self):\n        self.cls = LLM\n\n"
        "    def start(self):\n        return self.cls(model='m', attention_backend='flash_attention_2')\n", 2),
    # a command line in a list, a launch under autocast
    "argv and autocast": (
        "import subprocess\nimport torch\nfrom transformers import AutoModelForCausalLM\n\n" + _UNRELATED
        + "def serve():\n    subprocess.run(['vllm', 'serve', 'm', '--attention-backend', 'sdpa'])\n\n"
        "def load():\n    with torch.autocast('cuda'):\n        return AutoModelForCausalLM.from_pretrained("
        "'m', attn_implementation='flash_attention_2', torch_dtype=torch.float32)\n", 1),
    # mixed precision set up in another function than the float32 FlashAttention load (EKB802):
    # that function must stay
    "Accelerator elsewhere": (
        "import torch\nfrom accelerate import Accelerator\nfrom transformers import AutoModelForCausalLM\n\n"
        + _UNRELATED + "def setup():\n    return Accelerator(mixed_precision='bf16')\n\n" + _UNRELATED.replace("unrelated", "other")
        + "def load():\n    return AutoModelForCausalLM.from_pretrained("
        "'m', attn_implementation='flash_attention_2', torch_dtype=torch.float32)\n", 0),
    "Accelerator elsewhere, precision off": (
        "import torch\nfrom accelerate import Accelerator\nfrom transformers import AutoModelForCausalLM\n\n"
        + _UNRELATED + "def setup():\n    return Accelerator(mixed_precision='no')\n\n"
        "def load():\n    return AutoModelForCausalLM.from_pretrained("
        "'m', attn_implementation='flash_attention_2', torch_dtype=torch.float32)\n", 1),
    "training arguments elsewhere": (
        "import torch\nimport transformers\nfrom transformers import AutoModelForCausalLM\n\n"
        + _UNRELATED + "class Setup:\n    def args(self):\n        return transformers.TrainingArguments('o', bf16=True)\n\n"
        "def load():\n    return AutoModelForCausalLM.from_pretrained("
        "'m', attn_implementation='flash_attention_2', torch_dtype=torch.float32)\n", 0),
    # names that grow through their own assignment: the resolver must still finish
    "self-referencing names": (
        "import transformers\nimport torch\nx = transformers\nx = x.sub\ny = torch\ny = y.nn\n"
        "z = x.AutoModel.from_pretrained('m', attn_implementation='fa3')\n", 0),
}


@pytest.mark.parametrize("name", [*TRICKY, *TRICKY_CONFIG])
def test_tricky_constructs(name, texts):
    source, expected = TRICKY.get(name) or TRICKY_CONFIG[name]
    data = source.encode("latin-1") if "latin-1" in name else source.encode()
    off, on = _both(data, texts)
    assert on == off
    assert len(off) - 1 == expected, off  # the last item is the skip reason
    off, on = _both(data, texts, report_unused=True)
    assert on == off
    if name in TRICKY_CONFIG:  # and with target versions, where more configuration rules report
        versions = {"vllm": "0.34.0", "sglang": "0.5.23", "transformers": "4.52.0"}
        assert _both(data, texts, versions=versions)[1] == _both(data, texts, versions=versions)[0]


def test_a_file_no_rule_can_report_in_is_not_parsed_by_libcst(texts, monkeypatch):
    """It passes the byte prefilter (the words are there), but nothing imports the kernel."""
    source = (b"# scaled_dot_product_attention from torch.nn.functional and sdpa_kernel from torch.nn.attention"
              b" are not used here\n"
              b"def scaled_dot_product_attention(q, k, v, attn_mask=None, is_causal=False):\n    return q\n"
              b"scaled_dot_product_attention(1, 2, 3, attn_mask=4, is_causal=True)\n")
    calls = []
    real = cst.parse_module
    monkeypatch.setattr(cst, "parse_module", lambda src, *a: calls.append(src) or real(src, *a))
    assert lint_source(source, "x.py", ALL, ARCHS, texts, module="x").findings == []
    assert calls == []
    assert lint_source(source, "x.py", ALL, ARCHS, texts, module="x", screen=False).findings == []
    assert calls


def test_narrowed_keeps_every_line_and_what_it_does_not_blank():
    source = _SDPA_CLASS.encode()
    tree = ast.parse(source)
    rule = next(r for r in ALL if r.CODE == "EKB302")
    facts = ModuleFacts(tree, "example", False)
    _, regions, calls = screen.candidates(tree, source, [rule], "example", False, lambda: facts)
    functions = narrow.plan(facts, regions, calls)
    assert [f.name for f in functions] == ["unrelated"]
    parsed = narrow.narrowed(source, functions)
    assert parsed.splitlines()[:7] == source.splitlines()[:7]
    assert parsed.splitlines()[11:] == source.splitlines()[11:]
    assert b"sum(y)" not in parsed and parsed.count(b"\n") == source.count(b"\n")
    ast.parse(parsed)
    assert narrow.narrowed(source.replace(b"\n", b"\r\n"), functions) is None


def test_only_the_methods_the_call_reads_stay():
    """forward holds the call; __init__ stores the self attribute its argument reads; unrelated
    stores another one and goes."""
    source = _FP8_LAYER.encode()
    tree = ast.parse(source)
    rule = next(r for r in ALL if r.CODE == "EKB205")
    facts = ModuleFacts(tree, "example", False)
    _, regions, calls = screen.candidates(tree, source, [rule], "example", False, lambda: facts)
    assert [f.name for f in narrow.plan(facts, regions, calls)] == ["unrelated"]


def test_the_stages_are_on_by_default():
    assert engine.SCREEN is True
