"""`import flashinfer` on Python 3.9: "dataclass() got an unexpected keyword argument 'slots'".

Python 3.9.18 (pyenv) with pip 25.3 (the last for 3.9) and PyPI's torch 2.8.0 (the last torch with a cp39
wheel; its CUDA build, with its nvidia-* wheels, imports without a GPU), flashinfer-python 0.5.2 (the
last release whose metadata admits 3.9; `--no-deps --target`) and the packages its import needs
(_flashinfer_jit.DEPS, packaging, ninja). Nothing here needs a device: the decorator refuses the keyword while the module
is being imported.

Reproduce: `import flashinfer` raises the record's TypeError (naming 'slots'); the notes keep the
traceback's last FlashInfer frame and what an unpinned `pip install --dry-run --no-deps flashinfer-python`
picks on 3.9. Fix 1: the same release imports on Python 3.11 (torch 2.13.0+cpu, _flashinfer_jit.site).
Fix 2: `pip install "flashinfer-python==0.2.5"` (its sdist, built by pip on 3.9, `--no-deps`) imports on
3.9 next to the same torch."""

import re

from verification.cases import _builds as b
from verification.cases import _flashinfer_jit as fi
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
RELEASE = "0.5.2"
OLD_RELEASE = "0.2.5"
TORCH_PY39 = "torch==2.8.0"
IMPORT = ("import sys, torch\nprint('python', sys.version.split()[0], 'torch', torch.__version__)\n"
          "import flashinfer\nprint('imported flashinfer', flashinfer.__version__)\n")


def py39(ctx) -> _venv.Venv:
    return _venv.noted(ctx, _venv.venv(ctx, "py39-torch-2.8.0", python="3.9", pip=b.PIP_PY39,
                                       install=[TORCH_PY39, *fi.DEPS, "packaging", "ninja"], timeout=1800))


def on_py39(ctx, requirement: str) -> _venv.Run:
    env = py39(ctx)
    folder = b.pip_target(ctx, "target-py39-" + requirement.replace("==", "-"), "--no-deps", requirement, env=env,
                          what=f"{requirement} on Python 3.9")
    ctx.note(f"{requirement} (--no-deps --target) on Python 3.9")
    res = b.run_with_torch(ctx, IMPORT, env=env, path=[folder])
    ctx.note(f"`import flashinfer`: {_venv.last_exception(res.output, 200)}; "
             + " | ".join(ln for ln in res.output.splitlines() if ln.startswith(("python", "imported"))))
    if "python 3.9" not in res.output:
        ctx.skip(f"torch did not import on Python 3.9: {res.tail(400)}")
    return res


def reproduce(ctx):
    res = on_py39(ctx, f"flashinfer-python=={RELEASE}")
    frames = re.findall(r'File "[^"]*/(flashinfer/[^"]+)", line (\d+)', res.output)
    if frames:
        ctx.note("last FlashInfer frame: {}:{}".format(*frames[-1]))
    picked = py39(ctx).pip("install", "--dry-run", "--no-deps", "flashinfer-python", timeout=300)
    would = next((ln for ln in picked.output.splitlines() if ln.startswith("Would install")), picked.tail(200))
    ctx.note(f"unpinned on Python 3.9 (pip {b.PIP_PY39}, --dry-run --no-deps): {would}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    env, path = fi.site(ctx, RELEASE)
    res = b.run_with_torch(ctx, IMPORT, env=env, path=path)
    ctx.note(" | ".join(ln for ln in res.output.splitlines() if ln.startswith(("python", "imported"))))
    ctx.call(_venv.finished, res, f"imported flashinfer {RELEASE}", "import flashinfer on Python 3.11")


def fix_2(ctx):
    res = on_py39(ctx, f"flashinfer-python=={OLD_RELEASE}")
    ctx.call(_venv.finished, res, f"imported flashinfer {OLD_RELEASE}", "import flashinfer 0.2.5 on Python 3.9")
