"""pip's legacy route (`python setup.py egg_info`) fails for flash-attn when setup.py cannot import
what it needs: 'python setup.py egg_info did not run successfully.'

Reproduce: pip 24.2 with setuptools 80.9.0 and wheel 0.45.1 installed (so pip takes the legacy
route for a project without pyproject.toml) and no torch: `pip install flash-attn==2.8.3`.
Fix 1: `pip install -v --no-build-isolation flash-attn`: the box holds the exception setup.py
stopped on. Fix 2: torch (PyPI's 2.14.1), packaging, ninja and wheel first, then
`--no-build-isolation`: pip gets past egg_info and stops there. Fix 3 is
for AMD GPUs and a git checkout from GitHub; fix 4 is advice with nothing to run."""

from verification.cases import _builds as b

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def reproduce(ctx):
    res = b.fresh_install(ctx, b.FLASH_ATTN, pip=b.PIP_LEGACY, legacy=True)
    ctx.expect_error(b._venv.raise_tool_message, "pip", res.output, ctx.record["template"])


def fix_1(ctx):
    res = b.fresh_install(ctx, b.FLASH_ATTN, pip=b.PIP_LEGACY, legacy=True, extra=("-v", "--no-build-isolation"))
    ctx.call(b.box_names_cause, ctx, res)


def fix_2(ctx):
    res = b.no_isolation_install(ctx, b.FLASH_ATTN, "flash-attn", pip=b.PIP_LEGACY)
    ctx.call(b.past_metadata, ctx, res, ctx.record["template"])


def fix_3(ctx):
    ctx.skip("needs an AMD GPU with ROCm and a git checkout from GitHub (not reachable from here)")


def fix_4(ctx):
    ctx.skip("advice (run without flash-attn): nothing to run")
