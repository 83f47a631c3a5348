"""vLLM's FlashAttention wrapper (vllm/vllm_flash_attn/flash_attn_interface.py) of 0.14.0 calls
torch.ops._vllm_fa2_C.varlen_fwd with 22 positional values (num_splits was added); the _vllm_fa2_C
library of 0.13.0 declares 21, and PyTorch's binder refuses the call with RuntimeError
"_vllm_fa2_C::varlen_fwd() expected at most 21 argument(s) but received 22 argument(s). Declaration: ...".

On the CPU: the binder counts the values before any kernel is dispatched. vllm/vllm_flash_attn's Python
files (__init__.py, flash_attn_interface.py) of one vLLM wheel and the _vllm_fa2_C.abi3.so of another
(downloaded once from PyPI into ERRKB_VERIFY_CACHE/wheels) are put together in a folder as the top-level
package `vllm_flash_attn` (its imports are relative, so the files run unchanged; vllm's own __init__ is
not needed), next to the torch the .so's release pins (0.13.0: torch==2.9.0, 0.14.0: torch==2.9.1; PyPI's
CUDA builds, whose libraries load without a GPU: the .so needs torch's libraries and libcudart.so.12 only).
The call is flash_attn_varlen_func on fp16 CPU tensors (16 tokens, 4 heads, head dim 64, causal,
fa_version=2).

reproduce: 0.14.0's Python over 0.13.0's library (torch 2.9.0): the record's RuntimeError.
fix_1: the diagnostic prints the loaded library's schema: 21 arguments, one fewer than the wrapper passes.
fix_2: one release's files (0.14.0's Python and library, torch 2.9.1): the call gets past the binder
(it then stops at dispatch, "Could not run '_vllm_fa2_C::varlen_fwd' with arguments from the 'CPU'
backend": the operator has CUDA kernels only; noted, no output is compared).
fix_3 (a source rebuild): skipped, a CUDA build.
control: 0.13.0's own pair (torch 2.9.0): past the binder too."""

import zipfile

from errkb.verify.case import Refuted
from verification.cases import _abi_wheels as abi
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
TORCH = {"0.13.0": "2.9.0", "0.14.0": "2.9.1"}
FOLDER = "vllm/vllm_flash_attn/"
MARK = "ERRKB-FA2OP "

CHILD = r'''
import json, sys
import torch
import vllm_flash_attn.flash_attn_interface as f
res = {"torch": torch.__version__, "fa2": f.FA2_AVAILABLE, "fa2_reason": f.FA2_UNAVAILABLE_REASON, "raised": None}
schema = torch.ops._vllm_fa2_C.varlen_fwd.default._schema
res["schema_args"], res["schema"] = len(schema.arguments), str(schema)
q, k, v = (torch.randn(16, 4, 64, dtype=torch.float16) for _ in range(3))
cu = torch.tensor([0, 16], dtype=torch.int32)
try:
    f.flash_attn_varlen_func(q, k, v, max_seqlen_q=16, cu_seqlens_q=cu, max_seqlen_k=16, cu_seqlens_k=cu,
                             causal=True, fa_version=2)
except Exception as e:
    res["raised"] = [type(e).__name__, str(e)]
print(%r + json.dumps(res))
''' % MARK


def _package(ctx, py: str, lib: str):
    """A folder holding vllm_flash_attn/ with `py`'s Python files and `lib`'s _vllm_fa2_C library."""
    dest = _venv._tmp_root() / f"vllm-fa2-py{py}-so{lib}"
    pkg = dest / "vllm_flash_attn"
    if not (pkg / ".errkb-made").is_file():
        pkg.mkdir(parents=True, exist_ok=True)
        for release, names in ((py, ("__init__.py", "flash_attn_interface.py")), (lib, ("_vllm_fa2_C.abi3.so",))):
            with zipfile.ZipFile(abi.wheel_file(ctx, "vllm", release)) as z:
                for name in names:
                    (pkg / name).write_bytes(z.read(FOLDER + name))
        (pkg / ".errkb-made").write_text(f"{py} {lib}")
    ctx.note(f"vllm_flash_attn: Python files of vllm {py}, _vllm_fa2_C.abi3.so of vllm {lib}")
    return dest


def _run(ctx, py: str, lib: str) -> dict:
    torch = TORCH[lib]
    _, env = b.uv_env(ctx, f"torch-{torch}-fa2op", f"torch=={torch}", "numpy<2")
    res = _venv.run([env.python, "-c", CHILD], env=_venv.tool_env(VIRTUAL_ENV=str(env.path),
                                                                 PYTHONPATH=str(_package(ctx, py, lib))), timeout=600)
    got = _venv.reported(res, MARK)
    if not got["fa2"]:
        raise RuntimeError(f"_vllm_fa2_C did not load: {got['fa2_reason']}")
    ctx.note(f"torch {got['torch']}; loaded schema has {got['schema_args']} arguments; call: "
             + ("returned" if not got["raised"] else f"{got['raised'][0]}: {got['raised'][1][:160]}"))
    return got



def _past_binder(ctx, got):
    if got["raised"] and "argument(s) but received" in got["raised"][1]:
        ctx.call(_venv.raise_reported, got)  # the binder refused: refuted
    if got["raised"]:
        ctx.note("past the argument binder; the call stopped later, at dispatch: the operator has CUDA kernels only")


def reproduce(ctx):
    ctx.expect_error(_venv.raise_reported, _run(ctx, "0.14.0", "0.13.0"))


def fix_1(ctx):
    got = _run(ctx, "0.14.0", "0.13.0")
    ctx.note(f"schema of the loaded library: {got['schema'][:300]}")
    if got["schema_args"] != 21:
        raise Refuted(f"the loaded 0.13.0 library declares {got['schema_args']} arguments, not 21")


def fix_2(ctx):
    _past_binder(ctx, _run(ctx, "0.14.0", "0.14.0"))


def fix_3(ctx):
    ctx.skip("rebuilding vLLM's kernel libraries from a source checkout is a CUDA build; none here")


def control(ctx):
    _past_binder(ctx, _run(ctx, "0.13.0", "0.13.0"))
