"""pip's per-package line after flash-attn's wheel build failed: 'Failed building wheel for flash-attn'.

A build that fails fast (_builds.fa_mismatch_build): PyPI's torch 2.5.1 (CUDA 12.4) and the build tools
first, this machine's nvcc 13.0, `pip install --no-build-isolation flash-attn==2.8.3` (the PyPI sdist):
the wheel build stops on torch's CUDA version check within seconds. Verdict with pip 26.3; pip 24.2
(legacy `setup.py bdist_wheel` route) is checked in the notes, and so is the name pip prints for the
requirement spelled `flash_attn==2.8.3`. Fix 1 needs GitHub's release wheels; fix 2 (the compile
recipe) is run with torch 2.14.1 and nvcc 13.0 and its parts checked, but no flash-attn compile can
finish on this machine; fix 3 is for Windows."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800


def _line(res) -> str:
    return next((" ".join(ln.split()) for ln in res.output.splitlines() if "Failed building wheel for" in ln), "")


def reproduce(ctx):
    old = b.fa_mismatch_build(ctx, pip="24.2")
    ctx.note(f"pip 24.2: {_line(old)!r}")
    if _line(old) != "ERROR: Failed building wheel for flash-attn":
        raise AssertionError(f"pip 24.2 printed {_line(old)!r}")
    res = b.fa_mismatch_build(ctx)
    ctx.note(f"pip {b.PIP}: {_line(res)!r}")
    ctx.expect_error(_venv.raise_tool_message, "pip", res.output, ctx.record["template"])
    underscored = b.toolkit_build(ctx, "flash_attn==2.8.3", env_extra={"FLASH_ATTENTION_FORCE_BUILD": "TRUE"})
    ctx.note(f"requirement spelled flash_attn==2.8.3: {_line(underscored)!r}")


# the fixes these pip records share (verification/cases/_builds.py)
fix_1 = b.release_wheel_fix
fix_2 = b.compile_recipe_fix
fix_3 = b.windows_fix
