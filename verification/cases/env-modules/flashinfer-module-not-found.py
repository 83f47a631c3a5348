"""`import flashinfer` where flashinfer-python is not installed: 'No module named 'flashinfer''.

Reproduce: a new environment (CPython 3.11, pip 26.3, nothing else), `python -c "import flashinfer"`.
Fix 1's caveat: SGLang 0.5.3's wheel metadata (PyPI, `pip download --no-deps`) pins
flashinfer_python==0.4.0rc3, and `pip install flashinfer` finds no distribution on PyPI (pip 26.3,
--dry-run). Installing and importing flashinfer-python itself, and fix 2's engines, need CUDA."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 600


def reproduce(ctx):
    b.fresh_import_refused(ctx, "import flashinfer")


def fix_1(ctx):
    meta = b.wheel_metadata(ctx, "sglang", "0.5.3")
    env = _venv.venv(ctx, "fresh-" + b.PIP, pip=b.PIP)
    old = env.pip("install", "--dry-run", "flashinfer", timeout=300)

    def caveat():
        lines = [l for l in meta.splitlines() if l.startswith("Requires-Dist:") and "flashinfer" in l.lower()]
        if not any("flashinfer_python==0.4.0rc3" in l.replace(" ", "").replace("-", "_") for l in lines):
            raise AssertionError(f"sglang 0.5.3 declares {lines}")
        ctx.note(f"sglang 0.5.3 METADATA: {lines[0]}")
        if old.returncode == 0 or "No matching distribution found for flashinfer" not in old.output:
            raise AssertionError(f"`pip install flashinfer` resolved: {old.tail(300)}")
        ctx.note("pip install --dry-run flashinfer: " + old.output.strip().splitlines()[-1])

    ctx.call(caveat)
    ctx.note("not run: installing flashinfer-python and importing it with a CUDA torch (its JIT needs nvcc and a GPU to use)")


def fix_2(ctx):
    ctx.skip("starts vLLM or SGLang with another attention backend: a GPU server")
