"""pip 21.3-24.0's closing line after a failed wheel build: 'Could not build wheels for flash-attn, which
is required to install pyproject.toml-based projects'.

A build that fails fast (_builds.fa_mismatch_build): PyPI's torch 2.5.1 (CUDA 12.4) with setuptools
80.9.0 and wheel 0.45.1 first, this machine's nvcc 13.0, `pip install --no-build-isolation
flash-attn==2.8.3` (the PyPI sdist): the wheel build stops on torch's CUDA version check within
seconds. Verdict with pip 24.0, which takes the legacy `setup.py bdist_wheel` route for flash-attn (no
pyproject.toml; setuptools and wheel importable). The record's history is checked in the notes:
pip 23.3.2 prints the same line after a legacy build; pip 23.0 does not, and falls back to
`setup.py install` instead. Fix 1 needs GitHub's release wheels; fix 2 (the compile recipe) is run
with torch 2.14.1 and nvcc 13.0 and its parts checked, but no flash-attn compile can finish on this
machine; fix 3 is for Windows."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
LINE = "Could not build wheels for flash-attn, which is required to install pyproject.toml-based projects"


def _said(res) -> str:
    return next((" ".join(ln.split()) for ln in res.output.splitlines() if "Could not build wheels" in ln), "(no such line)")


def reproduce(ctx):
    newer = b.fa_mismatch_build(ctx, pip="23.3.2")
    ctx.note(f"pip 23.3.2: {_said(newer)!r}")
    if LINE not in _said(newer):
        raise AssertionError(f"pip 23.3.2 printed {_said(newer)!r}")
    old = b.fa_mismatch_build(ctx, pip="23.0")
    fallback = [" ".join(ln.split()) for ln in old.output.splitlines() if "setup.py install for flash-attn" in ln][:1]
    ctx.note(f"pip 23.0: {_said(old)!r}; " + (f"then {fallback[0]!r}" if fallback else "no setup.py install"))
    if LINE in _said(old) or not fallback:
        raise AssertionError(f"pip 23.0 did not fall back to setup.py install as the record says: {old.tail(400)}")
    res = b.fa_mismatch_build(ctx, pip="24.0")
    ctx.note(f"pip 24.0: {_said(res)!r}")
    ctx.expect_error(_venv.raise_tool_message, "pip", res.output, ctx.record["template"])


# the fixes these pip records share (verification/cases/_builds.py)
fix_1 = b.release_wheel_fix
fix_2 = b.compile_recipe_fix
fix_3 = b.windows_fix
