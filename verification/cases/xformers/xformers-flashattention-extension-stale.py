"""xFormers 0.0.21's Python next to 0.0.20's `_C_flashattention` (FlashAttention 1): "module
'xformers._C_flashattention' has no attribute 'varlen_fwd'".

Real PyPI wheels on the CPU: torch 2.0.1 (PyPI's CUDA 11.7 build, the torch both releases pin; numpy<2)
made by uv, and the cp311 wheels of xformers 0.0.20 and 0.0.21 unpacked (verification/cases/_abi_wheels.py).
The leftover file is made as users get it: 0.0.21's package folder with 0.0.20's `_C_flashattention.so` in
place of its own (on Windows 0.0.21's wheel has none, so the old one is the only file there; the Linux
wheel ships an FA2 build, which the control loads).

Stand-in for the GPU: xFormers registers `_flash_fwd` (xformers/ops/fmha/flash.py) as the CUDA
implementation of its `xformers_flash::flash_fwd` op, which memory_efficient_attention's flash operator
calls. With no GPU the dispatcher cannot route CPU tensors there, so each step calls that Python function
directly with small CPU tensors, in a child process: the attribute lookup the record is about comes before
any kernel work. The control and fix 2 pass when the call gets into the compiled `varlen_fwd`, which then
stops on the missing CUDA driver (no device here); fix 1 runs memory_efficient_attention's other operators
on the CPU against an fp32 reference. Fix 3 (a source rebuild) is hours of CUDA compiles: not run.
"""

import shutil

from verification.cases import _abi_wheels as abi
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
MARK = "ERRKB-XF "
TOL = 1e-5

CALL = """
import json, torch, xformers
import xformers.ops.fmha.flash as flash
got = {{"versions": [torch.__version__, xformers.__version__, flash.FLASH_VERSION], "raised": None}}
from xformers import _C_flashattention as ext
got["exports"] = sorted(n for n in dir(ext) if not n.startswith("__"))
q = torch.randn(8, 2, 64, dtype=torch.float16)
cu = torch.tensor([0, 8], dtype=torch.int32)
try:
    flash._flash_fwd(q, q, q, cu, cu, {args})
except Exception as e:
    got["raised"] = [type(e).__name__, str(e).splitlines()[0]]
print({mark!r} + json.dumps(got))
"""
ARGS_021 = "8, 8, 0.0, 0.125, False, False"  # 0.0.21: max_seqlen_q/k, p, softmax_scale, causal, return_softmax
ARGS_023 = "None, 8, 8, 0.0, 0.125, False, -1, -1, False"  # 0.0.23.post1 adds seqused_k and the window

OTHER_OPS = f"""
import json, torch, xformers, xformers.ops as xops
import xformers.ops.fmha.flash as flash
torch.manual_seed(0)
q, k, v = (torch.randn(1, 16, 2, 32) for _ in range(3))
out = xops.memory_efficient_attention(q, k, v)
t = lambda x: x.transpose(1, 2)
ref = t(torch.softmax(t(q) @ t(k).transpose(-1, -2) / 32 ** 0.5, -1) @ t(v))
print({MARK!r} + json.dumps({{"versions": [torch.__version__, xformers.__version__, flash.FLASH_VERSION],
                             "flash_fwd": hasattr(flash, "_flash_fwd")}}))
print("maxdiff", (out - ref).abs().max().item())
"""


def _torch_201(ctx):
    _, env = b.uv_env(ctx, "cuda-torch-2.0.1-numpy1", "torch==2.0.1", "numpy<2")
    return env


def _folder(ctx, name: str, flash_from: str | None) -> str:
    """0.0.21's xformers package in a folder of its own, its _C_flashattention.so taken from release
    `flash_from` (None: removed)."""
    new = abi.unpacked(ctx, "xformers", "0.0.21")
    dest = _venv._tmp_root() / name
    if not dest.exists():
        shutil.copytree(new / "xformers", dest / "xformers")
        ext = dest / "xformers" / "_C_flashattention.so"
        ext.unlink()
        if flash_from is not None:
            shutil.copy2(abi.unpacked(ctx, "xformers", flash_from) / "xformers" / "_C_flashattention.so", ext)
    return str(dest)


def _call(ctx, env, path: str | None, args: str) -> dict:
    extra = {"PYTHONPATH": path} if path else {}
    res = env.python_run(CALL.format(args=args, mark=MARK), timeout=600, cwd=_venv._tmp_root(), **extra)
    got = _venv.reported(res, MARK)
    ctx.note(f"torch, xformers, FLASH_VERSION: {', '.join(got['versions'])}; _C_flashattention exports "
             f"{', '.join(got['exports'])}; flash._flash_fwd(...) -> "
             + (": ".join(got["raised"]) if got["raised"] else "returned"))
    return got


def _reached_compiled(got: dict) -> None:
    """The call got into the compiled varlen_fwd: it exists, and what stopped the call is the CUDA runtime
    finding no driver, not a Python lookup."""
    if "varlen_fwd" not in got["exports"]:
        raise AttributeError(f"the module has no varlen_fwd: {got['exports']}")
    if got["raised"] and not (got["raised"][0] == "RuntimeError" and "CUDA" in got["raised"][1]):
        _venv.raise_reported(got)


def reproduce(ctx):
    for release in ("0.0.20", "0.0.21"):
        ctx.note(f"xformers {release} METADATA: Requires-Dist {', '.join(abi.requires(ctx, 'xformers', release))}")
    got = _call(ctx, _torch_201(ctx), _folder(ctx, "xformers-0.0.21-with-0.0.20-flash", "0.0.20"), ARGS_021)
    ctx.note("0.0.21's Python with 0.0.20's _C_flashattention.so (what a leftover 0.0.20 file gives)")
    ctx.expect_error(_venv.raise_reported, got)


def control(ctx):
    got = _call(ctx, _torch_201(ctx), _folder(ctx, "xformers-0.0.21-as-shipped", "0.0.21"), ARGS_021)
    ctx.note("0.0.21's Linux wheel as shipped (its own FlashAttention 2 module)")
    ctx.call(_reached_compiled, got)


def fix_1(ctx):
    env = _torch_201(ctx)
    folder = _folder(ctx, "xformers-0.0.21-without-flash", None)
    res = env.python_run(OTHER_OPS, timeout=600, cwd=_venv._tmp_root(), PYTHONPATH=folder)
    got = _venv.reported(res, MARK)
    ctx.note(f"_C_flashattention.so deleted: torch, xformers, FLASH_VERSION: {', '.join(got['versions'])}; "
             f"flash._flash_fwd defined: {got['flash_fwd']} (no flash_attn installed either)")
    ctx.note("the fix's `pip show -f` ownership check is for the Windows wheels of 0.0.21/0.0.22, which list no "
             "_C_flashattention; the Linux wheel used here ships and lists its own, so that check was not run")
    ctx.call(_venv.within, ctx, res, "maxdiff", "memory_efficient_attention on the CPU (fp32) vs the reference", TOL)


def fix_2(ctx):
    _, env = b.uv_env(ctx, "cuda-torch-2.1.2-xformers-0.0.23.post1", "torch==2.1.2", "xformers==0.0.23.post1", "numpy<2")
    got = _call(ctx, env, None, ARGS_023)
    ctx.note("one release installed whole (the fix's xformers 0.0.23.post1 with the torch it pins, 2.1.2)")
    ctx.call(_reached_compiled, got)


def fix_3(ctx):
    ctx.skip("rebuilding xFormers with its FlashAttention extension from source is hours of CUDA compiles on this "
             "2-core machine")
