"""llm-foundry 0.2.0-0.6.0: an MPT attention layer with attn_impl 'triton' raises RuntimeError('Requirements for
`attn_impl: triton` not installed. ...') when its Triton FlashAttention copy (which imports the triton_pre_mlir
fork) does not import.

Environment: a new virtual environment with torch 2.13.0+cpu (local wheel), einops and packaging (PyPI);
llm-foundry 0.6.0 and 0.2.0 from PyPI (`pip --target --no-deps`), and for 0.6.0 transformers 4.38.2 (the
release its metadata asks for, `pip --target` with its dependencies). triton_pre_mlir and flash-attn are not
installed (a PyPI install never has the fork: it is a git dependency). llmfoundry/__init__.py imports the
whole training stack (composer, ...), so the child registers `llmfoundry`, `llmfoundry.models` and
`llmfoundry.models.layers` as bare packages pointing at the installed folders and imports
llmfoundry/models/layers/attention.py unchanged (its own imports: fc.py, norm.py, transformers).

Reproduce: MultiheadAttention(64, 4, attn_impl='triton') of each release, called on a (2, 16, 64) input,
raises the record's RuntimeError (torch is 2.x, so the flash_attn fallback for torch < 2.0 is not tried).
Fix 1: attn_impl 'torch' (the config change) runs the same layer and matches an fp64 causal-attention
reference built from its own Wqkv and out_proj weights (1e-5). Fix 2 (build the triton_pre_mlir fork from
git; a GPU to use it) is not run. Fix 3: the fix's import names the real cause, `No module named
'triton_pre_mlir'` (through the bare packages: a full install of llmfoundry would first import its
__init__)."""

import json

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
RELEASES = ("0.6.0", "0.2.0")
TRANSFORMERS = {"0.6.0": "transformers==4.38.2"}

CHILD = r'''
import json, sys, types
MODE, ROOT = sys.argv[1], sys.argv[2]
for name, sub in (("llmfoundry", "/llmfoundry"), ("llmfoundry.models", "/llmfoundry/models"),
                  ("llmfoundry.models.layers", "/llmfoundry/models/layers")):
    pkg = types.ModuleType(name)
    pkg.__path__ = [ROOT + sub]
    sys.modules[name] = pkg
if MODE == "check":
    from llmfoundry.models.layers.flash_attn_triton import flash_attn_func
    raise SystemExit(0)
import math, torch
from llmfoundry.models.layers.attention import MultiheadAttention
torch.manual_seed(0)
layer = MultiheadAttention(64, 4, attn_impl=MODE).eval()
x = torch.randn(2, 16, 64)
with torch.no_grad():
    out = layer(x, is_causal=True)[0]
    w = {k: v.double() for k, v in layer.state_dict().items()}
    qkv = x.double() @ w["Wqkv.weight"].T + w["Wqkv.bias"]
    q, k, v = (t.reshape(2, 16, 4, 16).transpose(1, 2) for t in qkv.split(64, dim=2))
    s = q @ k.transpose(-2, -1) / math.sqrt(16)
    s = s.masked_fill(torch.ones(16, 16, dtype=torch.bool).triu(1), float("-inf"))
    ref = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(2, 16, 64) @ w["out_proj.weight"].T + w["out_proj.bias"]
print("RESULT", json.dumps({"err": float((out.double() - ref).abs().max()), "shape": list(out.shape)}), flush=True)
'''

_runs: dict = {}


def _run(ctx, release: str, mode: str) -> _venv.Run:
    key = (release, mode)
    if key not in _runs:
        env = _venv.venv(ctx, "cpu-torch-einops-packaging", pip=b.PIP,
                         install=[*b.cpu_torch_requirement(), "einops", "packaging"])
        _venv.noted(ctx, env)
        root = b.target_dir(ctx, f"llm-foundry=={release}", no_deps=True, env=env)
        path = [root] + ([b.target_dir(ctx, TRANSFORMERS[release], env=env)] if release in TRANSFORMERS else [])
        code = CHILD.replace("sys.argv[1], sys.argv[2]", f"{mode!r}, {root!r}")
        _runs[key] = b.run_with_torch(ctx, code, env=env, path=path)
    return _runs[key]


def reproduce(ctx):
    for release in RELEASES[1:]:
        res = _run(ctx, release, "triton")
        ctx.note(f"llm-foundry {release}, attn_impl 'triton': {_venv.last_exception(res.output, 300)}")
    res = _run(ctx, RELEASES[0], "triton")
    ctx.note(f"llm-foundry {RELEASES[0]}, attn_impl 'triton': {_venv.last_exception(res.output, 300)}")

    def both():
        for release in RELEASES[1:]:
            other = _run(ctx, release, "triton")
            if not _venv.tool_message(_venv.last_exception(other.output), ctx.record["template"]):
                raise AssertionError(f"{release} did not raise the message: {other.tail(400)}")
        _venv.reraise(res.output, ctx.record["template"], cls="RuntimeError")
    ctx.expect_error(both)


def fix_1(ctx):
    errs = []
    for release in RELEASES:
        res = _run(ctx, release, "torch")
        line = _venv.printed(res, "RESULT ")
        result = json.loads(line[7:])
        ctx.note(f"llm-foundry {release}, attn_impl 'torch': output {result['shape']}, against fp64 {result['err']:.2e}")
        errs.append(result["err"])
    ctx.close(errs, [0.0] * len(errs), atol=1e-5, what="attn_impl 'torch' against an fp64 causal attention")


def fix_2(ctx):
    ctx.skip("builds the triton_pre_mlir fork from a git branch (CMake, a CUDA GPU to use it): not run")


def fix_3(ctx):
    res = _run(ctx, RELEASES[0], "check")
    cause = _venv.last_exception(res.output, 300)
    ctx.note(f"llm-foundry {RELEASES[0]}: `from llmfoundry.models.layers.flash_attn_triton import flash_attn_func`: {cause}")

    def names_cause():
        if "No module named 'triton_pre_mlir'" not in cause:
            raise AssertionError(f"the import did not name the missing fork: {res.tail(400)}")
    ctx.call(names_cause)
