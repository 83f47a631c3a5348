"""pip's spinner line for a failed wheel build: 'Building wheel for flash-attn (setup.py) ... error'.

A build that fails fast (_builds.fa_mismatch_build): PyPI's torch 2.5.1 (CUDA 12.4) with setuptools
80.9.0 and wheel 0.45.1 first, this machine's nvcc 13.0, `pip install --no-build-isolation
flash-attn==2.8.3` (the PyPI sdist): the wheel build stops on torch's CUDA version check within
seconds. pip draws the spinner only at a terminal (into a pipe or a log it writes "Building wheel for
flash-attn (pyproject.toml): finished with status 'error'"), so pip runs under a pseudo-terminal.
Verdict with pip 24.2 ('(setup.py)': the legacy route for a project without pyproject.toml, with
setuptools and wheel importable); the notes check pip 25.2 (still '(setup.py)'), pip 25.3 and 26.3
('(pyproject.toml)'), the box heading of 24.2, and what 26.3 writes into a pipe.
Fix 1: the fix's -v log (pip 26.3, through a pipe as `tee` makes it) and its grep: the CUDA mismatch line
is among the 20 lines. Fix 2 needs GitHub's release wheels. Fix 3 (a toolkit of torch's CUDA major
version, MAX_JOBS=4): run with torch 2.14.1 and nvcc 13.0, its parts checked; no flash-attn compile can
finish on this machine."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
GREP = r"Error|error:|FAILED:|mismatches|Killed|Guessing wheel URL"  # fix 1's grep -E


def _spinner(res) -> str:
    return next((" ".join(ln.split()) for ln in res.output.splitlines() if ln.strip().startswith("Building wheel for")),
                "(no spinner line)")


def reproduce(ctx):
    for pip, how in (("25.2", "setup.py"), ("25.3", "pyproject.toml"), (b.PIP, "pyproject.toml")):
        res = b.fa_mismatch_build(ctx, pip=pip, tty=True)
        ctx.note(f"pip {pip} at a terminal: {_spinner(res)!r}")
        if _spinner(res) != f"Building wheel for flash-attn ({how}) ... error":
            raise AssertionError(f"pip {pip} printed {_spinner(res)!r}")
    piped = b.fa_mismatch_build(ctx)
    ctx.note(f"pip {b.PIP} into a pipe: {_spinner(piped)!r} ... "
             + repr(next((" ".join(ln.split()) for ln in piped.output.splitlines() if "finished with status" in ln
                          and "Building wheel" in ln), "")))
    res = b.fa_mismatch_build(ctx, pip="24.2", tty=True)
    box = next((" ".join(ln.split()) for ln in res.output.splitlines() if ln.strip().startswith("×")), "")
    ctx.note(f"pip 24.2 at a terminal: {_spinner(res)!r}; box: {box!r}")
    if box != "× python setup.py bdist_wheel did not run successfully.":
        raise AssertionError(f"pip 24.2's box heading differs from the record: {box!r}")
    ctx.expect_error(_venv.raise_tool_message, "pip", res.output, ctx.record["template"])


def fix_1(ctx):
    res = b.fa_mismatch_build(ctx, extra=("-v",))
    hits = [ln.strip() for ln in res.output.splitlines() if re.search(GREP, ln)][:20]
    cause = next((h for h in hits if "mismatches" in h), None)
    if cause is None:
        raise AssertionError(f"the fix's grep does not show the cause in its 20 lines: {hits}")
    ctx.note(f"grep: {len(hits)} lines, line {hits.index(cause) + 1} is the cause: {cause[:200]}")


fix_2 = b.release_wheel_fix  # shared with the other flash-attn pip records (_builds.py)
fix_3 = b.compile_recipe_fix
