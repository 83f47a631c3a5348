"""`import flash_attn.flash_attn_interface` where the flash_attn Python finds is not FlashAttention 2:
flash-attn-4 alone (its wheels install only flash_attn/cute/, so flash_attn is a namespace package)
gives "No module named 'flash_attn.flash_attn_interface'".

Environment: a new environment with only pip (_builds.fresh_import); the flash-attn-4 4.0.0b29 wheel
(PyPI, pure Python, downloaded with --no-deps) unpacked into the folder the steps run in, as an
installed copy would sit in site-packages. Reproduce: the import raises the record's message. Fix 1:
the check prints the folder as flash_attn's __path__, with no __file__ (a namespace package, not
flash-attn 2). Fix 3: with that folder removed, Python finds no flash_attn at all (the plain
`No module named 'flash_attn'` that code checking for FlashAttention 2 expects). Fix 2 (building
flash-attn 2) is not run here."""

import shutil
import zipfile

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
FA4 = "flash-attn-4==4.0.0b29"
CHECK = "import flash_attn; print('path', list(flash_attn.__path__), getattr(flash_attn, '__file__', None))"


def _folder(ctx, with_fa4: bool = True):
    folder = _venv._tmp_root() / "fa4-alone"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    if with_fa4:
        wheels = _venv._tmp_root() / "fa4-wheel"
        if not sorted(wheels.glob("flash_attn_4-*.whl")):
            env = _venv.venv(ctx, "fresh-" + b.PIP, pip=b.PIP)
            res = env.pip("download", "--no-deps", "-d", wheels, FA4, timeout=600)
            if res.returncode != 0:
                ctx.skip(f"could not download {FA4}: {res.tail(300)}")
        wheel = sorted(wheels.glob("flash_attn_4-*.whl"))[0]
        zipfile.ZipFile(wheel).extractall(folder)
        ctx.note(f"{wheel.name} unpacked beside the import")
    return folder


def reproduce(ctx):
    res = b.fresh_import(ctx, "import flash_attn.flash_attn_interface", cwd=_folder(ctx))
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    folder = _folder(ctx)
    res = b.fresh_import(ctx, CHECK, cwd=folder)
    shown = next((line for line in res.output.splitlines() if line.startswith("path ")), "")

    def check():
        if str(folder / "flash_attn") not in shown or not shown.endswith("None"):
            raise AssertionError(f"the check did not show a namespace flash_attn in {folder}: {res.tail(300)}")
    ctx.call(check)


def fix_3(ctx):
    res = b.fresh_import(ctx, "import flash_attn", cwd=_folder(ctx, with_fa4=False))

    def check():
        if "No module named 'flash_attn'" not in res.output:
            raise AssertionError(f"flash_attn is still found: {res.tail(300)}")
    ctx.call(check)
