"""FlashAttention-3's interface file of flash-attention v2.7.3 imported without its extension:
'No module named 'flash_attn_3_cuda''.

Reproduce: flash-attn 2.7.3's sdist from PyPI (which carries hopper/ as in the git tag; line 10 of
hopper/flash_attn_interface.py imports flash_attn_3_cuda), unpacked; `python -c "import
flash_attn_interface"` run inside hopper/ (where the file is found, as for a checkout or a copied file)
with torch 2.14.1 from PyPI installed and no FlashAttention-3 build. Both fixes compile hopper/
for sm90: not run here."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def _hopper(ctx):
    return b.flash_attn_source(ctx, "2.7.3") / "hopper"


def reproduce(ctx):
    hopper = _hopper(ctx)
    res = b.run_with_torch(ctx, "import flash_attn_interface", cwd=hopper)
    ctx.note("in flash_attn-2.7.3/hopper/: " + res.summary().split(": ", 1)[-1])
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    ctx.skip("compiles the hopper extension (CUDA, sm90): not on this machine")


def fix_2(ctx):
    ctx.skip("compiles the hopper extension of v2.8.3 (CUDA, sm90): not on this machine")
