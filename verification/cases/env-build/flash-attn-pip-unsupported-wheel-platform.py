"""pip refuses a flash-attn wheel whose file-name tags the interpreter does not accept: '<file> is not a
supported wheel on this platform.' The case follows the record's second cause, a wheel made with
`wheel convert` from a locally built egg, on this Linux machine (the record's paste is its Windows twin).

Environment: pip 26.3 and wheel 0.45.1 (b.PIP, b.WHEEL) in new virtual environments of this CPython
3.11. The egg is a stand-in made here: a zip named flash_attn-2.6.3-py3.11-linux-x86_64.egg (the name
setuptools gives a platform egg) holding EGG-INFO/PKG-INFO and a one-line flash_attn/__init__.py; no
flash-attn code is built or used, since only the file name decides.

Reproduce: `wheel convert` turns the egg into flash_attn-2.6.3-py311-cp311-linux_x86_64.whl, and
`pip install --no-deps` of that file stops with the record's message. Fix 1: `pip debug --verbose` lists
cp311-cp311-linux_x86_64 among the compatible tags and no py311-cp311 pair (the meaning's claim). Fix 2:
`wheel tags --python-tag cp311` writes flash_attn-2.6.3-cp311-cp311-linux_x86_64.whl, which installs,
and `import flash_attn` then works. Fix 3 (a release wheel or a source build for this platform) needs
flash-attn's CUDA build or its GitHub release downloads: skipped."""

import sys
import zipfile

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
PY = "%d%d" % sys.version_info[:2]


def _tools(ctx):
    return _venv.venv(ctx, "fresh-" + b.PIP + "-wheel", pip=b.PIP, install=[f"wheel=={b.WHEEL}"])


def _converted(ctx):
    env = _tools(ctx)
    folder = _venv._tmp_root() / "egg-convert"
    folder.mkdir(exist_ok=True)
    egg = folder / f"flash_attn-2.6.3-py{sys.version_info[0]}.{sys.version_info[1]}-linux-x86_64.egg"
    with zipfile.ZipFile(egg, "w") as z:
        z.writestr("EGG-INFO/PKG-INFO", "Metadata-Version: 2.1\nName: flash_attn\nVersion: 2.6.3\n")
        z.writestr("flash_attn/__init__.py", "__version__ = '2.6.3'\n")
    res = _venv.run([env.bin("wheel"), "convert", "-d", folder, egg], cwd=folder, timeout=120)
    wheel = folder / f"flash_attn-2.6.3-py{PY}-cp{PY}-linux_x86_64.whl"
    if not wheel.is_file():
        raise RuntimeError(f"wheel convert did not write {wheel.name}: {res.tail(400)} (folder: {sorted(p.name for p in folder.iterdir())})")
    ctx.note(f"wheel {b.WHEEL} convert {egg.name} -> {wheel.name}")
    return env, wheel


def reproduce(ctx):
    _, wheel = _converted(ctx)
    target = _venv.venv(ctx, "fresh-" + b.PIP, pip=b.PIP)
    res = target.pip("install", "--no-deps", wheel, timeout=300)
    ctx.note(res.summary())
    ctx.expect_error(_venv.raise_tool_message, "pip", res.output, ctx.record["template"])


def fix_1(ctx):
    b.pip_tags_fix(ctx, listed=f"cp{PY}-cp{PY}-linux_x86_64", absent=f"py{PY}-cp{PY}")


def fix_2(ctx):
    env, wheel = _converted(ctx)
    res = _venv.run([env.bin("wheel"), "tags", "--python-tag", f"cp{PY}", wheel], cwd=wheel.parent, timeout=120)
    fixed = wheel.parent / f"flash_attn-2.6.3-cp{PY}-cp{PY}-linux_x86_64.whl"
    ctx.note(f"wheel tags --python-tag cp{PY}: {res.output.strip()[-200:]}")
    target = _venv.venv(ctx, "fresh-" + b.PIP + "-retagged", pip=b.PIP)
    installed = target.pip("install", "--no-deps", fixed, timeout=300)
    ctx.note(installed.summary())

    def installs():
        _venv.raise_tool_message("pip", installed.output, ctx.record["template"])
        if installed.returncode != 0:
            raise AssertionError(installed.tail(600))
        got = target.python_run("import flash_attn; print(flash_attn.__version__)")
        if got.output.strip() != "2.6.3":
            raise AssertionError(f"import after install: {got.tail(300)}")
        ctx.note(f"installed {fixed.name}; import flash_attn -> {got.output.strip()}")

    ctx.call(installs)


def fix_3(ctx):
    ctx.skip("needs flash-attn's Linux release wheel from GitHub for a CUDA torch, or a CUDA source build")
