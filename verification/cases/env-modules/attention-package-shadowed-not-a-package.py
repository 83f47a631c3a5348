"""A file named xformers.py in the working directory hides the installed xformers package:
"No module named 'xformers.ops'; 'xformers' is not a package".

Environment: xformers 0.0.28.post3 (PyPI wheel for this Python) with the torch it pins (2.5.1,
PyPI), installed by uv 0.9.0. The steps run Python in a folder of their own holding a one-line
xformers.py, as a user's script or a stray file would be.

Reproduce: `import xformers.ops` there raises the record's message. Fix 1: the fix's check names
the stray file (not site-packages); once it is renamed, the same import loads xformers from
site-packages."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
REQUIREMENTS = ("torch==2.5.1", "xformers==0.0.28.post3")
WHERE = "import xformers; print('file', xformers.__file__)"


def _folder(ctx):
    folder = _venv._tmp_root() / "shadowed-xformers"
    folder.mkdir(exist_ok=True)
    for stale in folder.glob("xformers*.py"):
        stale.unlink()
    (folder / "xformers.py").write_text("# a script that happens to be called xformers.py\n")
    return folder


def _env(ctx):
    tool, env = b.uv_env(ctx, "xformers-0.0.28.post3-torch-2.5.1", *REQUIREMENTS)
    ctx.note("uv pip install " + " ".join(REQUIREMENTS) + f"; installed xformers {env.version('xformers')}")
    return env


def reproduce(ctx):
    env, folder = _env(ctx), _folder(ctx)
    res = env.python_run("import xformers.ops", cwd=folder)
    ctx.note("`import xformers.ops` next to xformers.py: " + _venv.last_exception(res.output))
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    env, folder = _env(ctx), _folder(ctx)
    before = env.python_run(WHERE, cwd=folder)
    shown = next((line[5:] for line in before.output.splitlines() if line.startswith("file ")), "")
    ctx.note(f"the fix's check before renaming: {shown}")
    (folder / "xformers.py").rename(folder / "xformers_script.py")
    after = env.python_run("import xformers.ops\n" + WHERE, cwd=folder)
    found = next((line[5:] for line in after.output.splitlines() if line.startswith("file ")), "")
    ctx.note(f"after renaming it: {found or _venv.last_exception(after.output)}")

    def check():
        if not shown.startswith(str(folder)):
            raise AssertionError(f"the check did not name the stray file: {shown!r}")
        if "site-packages" not in found:
            raise AssertionError(f"xformers.ops did not load from site-packages: {after.tail(400)}")
    ctx.call(check)
