"""FlashAttention-3's interface file of flash-attention v2.7.3 imported without its extension:
'No module named 'flash_attn_3_cuda''.

Reproduce: flash-attn 2.7.3's sdist from PyPI (which carries hopper/ as in the git tag; line 10 of
hopper/flash_attn_interface.py imports flash_attn_3_cuda), unpacked; `python -c "import
flash_attn_interface"` run inside hopper/ (where the file is found, as for a checkout or a copied file)
with torch 2.14.1 from PyPI installed and no FlashAttention-3 build. Both fixes compile hopper/
for sm90: not run here."""

import tarfile

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
SDIST = "flash_attn-2.7.3.tar.gz"


def _hopper(ctx):
    folder = _venv.cache_dir() / "sdists"
    if not (folder / SDIST).is_file():
        env = b.with_torch(ctx)  # pip download prepares the sdist's metadata: setup.py needs torch
        got = env.pip("download", "--no-deps", "--no-binary", ":all:", "--no-build-isolation", "flash-attn==2.7.3",
                      "-d", folder, timeout=600)
        if not (folder / SDIST).is_file():
            ctx.skip(f"could not download {SDIST}: {got.tail(300)}")
    root = _venv._tmp_root() / "flash_attn-2.7.3"
    if not root.is_dir():
        with tarfile.open(folder / SDIST) as tar:
            tar.extractall(_venv._tmp_root(), filter="data")
    return root / "hopper"


def reproduce(ctx):
    hopper = _hopper(ctx)
    res = b.run_with_torch(ctx, "import flash_attn_interface", cwd=hopper)
    ctx.note("in flash_attn-2.7.3/hopper/: " + res.summary().split(": ", 1)[-1])
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    ctx.skip("compiles the hopper extension (CUDA, sm90): not on this machine")


def fix_2(ctx):
    ctx.skip("compiles the hopper extension of v2.8.3 (CUDA, sm90): not on this machine")
