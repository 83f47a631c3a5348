"""`import xformers.ops` where flash_attn is importable and outside the xFormers release's window:
"Requires Flash-Attention version >=2.7.1,<=2.8.2 but got 2.8.3."

Real wheels only, nothing stood in: xformers 0.0.32.post2 (PyPI's cp39-abi3 wheel; no
_C_flashattention of its own, so flash.py takes the flash_attn branch) and 0.0.35 (PyPI), flash-attn
2.8.2 and 2.8.3 as wheels built from their PyPI sdists with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE
(pip 26.3, --no-build-isolation, next to torch 2.14.1), each environment made by uv 0.9.0 with torch
2.14.1 (PyPI, CUDA 13.0). flash-attn 2.x's __init__ imports flash_attn_2_cuda first, so the steps
import it through flash-attn's own Triton backend (FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE: then
flash_attn_interface has flash_attn_gpu from the Triton code, which is what xFormers looks up); the
version check reads only flash_attn.__version__.

0.0.32.post2 pins torch==2.8.0 (CUDA 12.8: 3 GB of wheels not on this machine), so it is installed
with --no-deps next to torch 2.14.1: its compiled extensions do not load (xFormers warns and goes
on), flash.py's check runs as it does on the pinned torch, and past that check the import stops in
flash3.py, whose FA3 extension is built for torch 2.8.0 (libcudart.so.12, then undefined symbols).
So for fixes 1 and 3 on 0.0.32.post2 the claim checked is the record's: flash.py finishes (its
module stays in sys.modules with its FLASH_VERSION) and the record's message is not raised; the
later stop is noted, not judged. Fix 2 (0.0.35, whose requirement torch>=2.10 the environment
meets) must import xformers.ops completely."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
TORCH = "torch==2.14.1"
XF_OLD = "xformers==0.0.32.post2"
XF_NEW = "xformers==0.0.35"
AMD = {"FLASH_ATTENTION_TRITON_AMD_ENABLE": "TRUE"}
PROBE = '''
import sys
try:
    import xformers.ops
    print("ops imported")
except ImportError as e:
    print("import stopped later:", type(e).__name__, str(e)[:300])
f = sys.modules.get("xformers.ops.fmha.flash")
print("flash.py ran:", None if f is None else f.FLASH_VERSION)
'''



def _env(ctx, key: str, xformers: str, *requirements: str):
    """torch 2.14.1, einops, numpy and `requirements` by uv; then `xformers` with --no-deps for 0.0.32.post2
    (its torch==2.8.0 pin), with its dependencies for 0.0.35."""
    tool, env = b.uv_env(ctx, key, TORCH, "einops", "numpy", *requirements)
    stamp = env.path / ".errkb-xformers"
    if not stamp.exists():
        extra = ("--no-deps",) if xformers == XF_OLD else ()
        res = b.uv_pip(tool, env, "install", *extra, xformers)
        if res.returncode != 0:
            ctx.skip(f"could not install {xformers}: {res.tail(400)}")
        stamp.write_text(xformers)
    ctx.note(f"then `uv pip install {'--no-deps ' if xformers == XF_OLD else ''}{xformers}`; installed: "
             + ", ".join(f"{d} {env.version(d)}" for d in ("torch", "xformers", "flash-attn")))
    return env




def _run(env, code, **extra):
    return env.python_run(code, timeout=600, cwd=_venv._tmp_root(), **extra)


def reproduce(ctx):
    env = _env(ctx, "xf-0.0.32.post2-fa-2.8.3", XF_OLD, b.flash_attn_python_wheel(ctx, "2.8.3"))
    plain = _run(env, "import xformers.ops")
    ctx.note(f"without FLASH_ATTENTION_TRITON_AMD_ENABLE: {_venv.last_exception(plain.output, 300)}")
    res = _run(env, "import xformers.ops", **AMD)
    if "xFormers can't load C++/CUDA extensions" in res.output:
        ctx.note("xFormers warned that its C++/CUDA extensions do not load (built for torch 2.8.0)")
    ctx.note(f"with FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE: {_venv.last_exception(res.output, 300)}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"], "ImportError")


def _flash_py_accepts(ctx, res, expected: str | None, where: str):
    """flash.py finished (FLASH_VERSION `expected`), the record's message never printed."""
    text = _venv.tool_message(res.output, ctx.record["template"])
    if text:
        raise ImportError(text)
    _venv.reraise(res.output)
    ran = re.search(r"^flash\.py ran: (.*)$", res.output, re.M)
    if not ran or ran.group(1) == "None":
        raise AssertionError(f"xformers.ops.fmha.flash did not finish: {res.tail(500)}")
    if expected is not None and ran.group(1) != expected:
        raise AssertionError(f"FLASH_VERSION {ran.group(1)}, expected {expected}")
    later = next((l for l in res.output.splitlines() if l.startswith("import stopped later")), "ops imported")
    ctx.note(f"{where}: flash.py finished with FLASH_VERSION {ran.group(1)}; {later}")


def fix_1(ctx):
    env = _env(ctx, "xf-0.0.32.post2-fa-2.8.2", XF_OLD, b.flash_attn_python_wheel(ctx, "2.8.2"))
    res = _run(env, PROBE, **AMD)
    ctx.call(_flash_py_accepts, ctx, res, "2.8.2", "flash-attn 2.8.2 (inside >=2.7.1,<=2.8.2)")
    ctx.note("the later stop, if any, is flash3.py's FA3 extension built for torch 2.8.0 (this environment's "
             "torch mismatch, not the record's claim)")


def fix_2(ctx):
    env = _env(ctx, "xf-0.0.35-fa-2.8.3", XF_NEW, b.flash_attn_python_wheel(ctx, "2.8.3"))
    res = _run(env, "import xformers, xformers.ops, xformers.ops.fmha.flash as f\n"
                   "print('ops imported', xformers.__version__, f.FLASH_VERSION)", **AMD)

    def imports():
        _venv.reraise(res.output)
        line = next((l for l in res.output.splitlines() if l.startswith("ops imported")), None)
        if line is None or not line.endswith(" 2.8.3"):
            raise AssertionError(res.tail(500))
        ctx.note(f"{line} (flash-attn 2.8.3 inside 0.0.35's window); the fix's --index-url "
                 "(download.pytorch.org) is out of reach here: PyPI's 0.0.35 wheel, torch>=2.10 met by 2.14.1")

    ctx.call(imports)


def fix_3(ctx):
    bare = _env(ctx, "xf-0.0.32.post2-no-fa", XF_OLD)
    res = _run(bare, PROBE, **AMD)
    ctx.call(_flash_py_accepts, ctx, res, None, "flash-attn not installed")
    env = _env(ctx, "xf-0.0.32.post2-fa-2.8.3", XF_OLD, b.flash_attn_python_wheel(ctx, "2.8.3"))
    skip = _run(env, PROBE, XFORMERS_IGNORE_FLASH_VERSION_CHECK="1", **AMD)
    ctx.call(_flash_py_accepts, ctx, skip, "2.8.3", "flash-attn 2.8.3 with XFORMERS_IGNORE_FLASH_VERSION_CHECK=1")
    ctx.note("running a kernel through the bypassed check needs a GPU (the fix's caveat): not run")
