"""flash-attn's setup.py imports torch first; pip builds it in an isolated environment without torch.

Reproduce: `pip install flash-attn==2.8.3` with pip 26.3 in a new environment (Python 3.11, no wheel
on PyPI, so pip builds the sdist in isolation): the traceback inside pip's box ends in the record's
`No module named 'torch'`. Fix 1 as written, with PyPI's torch 2.14.1 (CUDA 13.0) standing for
the cu124 build of the README (download.pytorch.org is out of reach here; the import is the same):
torch, then packaging/ninja/wheel, then `pip install flash-attn --no-build-isolation` gets past the
import and the metadata step and stops there (the CUDA compile takes hours
on two cores). Fix 2 installs a wheel from flash-attn's GitHub releases, which this machine cannot reach."""

from verification.cases import _builds as b

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def reproduce(ctx):
    res = b.fresh_install(ctx, b.FLASH_ATTN)
    ctx.expect_error(b._venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    b.flash_attn_without_isolation(ctx)


def fix_2(ctx):
    ctx.skip("needs flash-attn's GitHub release wheels: only PyPI is reachable from this machine, "
             "and PyPI has no flash-attn wheel")
