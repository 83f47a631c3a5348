"""pip's closing line after flash-attn's wheel build failed: 'Failed to build installable wheels for
some pyproject.toml based projects'.

A build that fails fast (_builds.fa_mismatch_build): PyPI's torch 2.5.1 (CUDA 12.4) and the build tools
first, this machine's nvcc 13.0, `pip install --no-build-isolation flash-attn==2.8.3` (the PyPI sdist):
setup.py's metadata step passes and the wheel build stops on torch's CUDA version check within seconds.
Run with pip 24.2 and 25.1 (the wording the record gives for 24.1-24.3.1 and 25.0-25.1, checked in the
notes) and 26.3 (the verdict: the 25.2+ block). Fix 1 needs GitHub's release wheels; fix 2 (the compile
recipe) is run with torch 2.14.1 and nvcc 13.0 (_builds.fa_compile_recipe) and its parts checked, but
no flash-attn compile can finish on this machine; fix 3 is for Windows."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
CLAIMS = {"24.2": r"^ERROR: ERROR: Failed to build installable wheels for some pyproject\.toml based projects \(flash-attn\)$",
          "25.1": r"^ERROR: Failed to build installable wheels for some pyproject\.toml based projects \(flash-attn\)$",
          b.PIP: r"^× Failed to build installable wheels for some pyproject\.toml based projects / ╰─> flash-attn$"}


def _wording(res) -> str:
    line = next((ln for ln in res.output.splitlines() if "Failed to build installable wheels" in ln), "")
    after = res.output.split(line, 1)[1].lstrip().splitlines()[:1] if line else []
    return " ".join(line.split()) + (" / " + after[0].strip() if after and line.strip().startswith("×") else "")


def reproduce(ctx):
    for pip in ("24.2", "25.1", b.PIP):
        res = b.fa_mismatch_build(ctx, pip=pip)
        said = _wording(res)
        ctx.note(f"pip {pip} closing line: {said!r}")
        if not re.search(CLAIMS[pip], said):
            raise AssertionError(f"pip {pip} wording differs from the record: {said!r}")
    ctx.expect_error(_venv.raise_tool_message, "pip", res.output, ctx.record["template"])


# the fixes these pip records share (verification/cases/_builds.py)
fix_1 = b.release_wheel_fix
fix_2 = b.compile_recipe_fix
fix_3 = b.windows_fix
