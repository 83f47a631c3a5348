"""pip refuses a wheel file whose Python tag does not match the interpreter: '<file> is not a
supported wheel on this platform.'

Reproduce: pip 26.3 on CPython 3.11, `pip install ./xformers-0.0.28.post3-cp312-cp312-manylinux_2_28_x86_64.whl`
(the real PyPI file, built for CPython 3.12). Fix 1: `pip debug --verbose` lists the compatible tags,
cp311 among them and cp312 not. Fix 2: xformers 0.0.32.post2 with torch 2.8.0 from an index resolves
to wheels for this Python (PyPI instead of the fix's download.pytorch.org, out of reach here;
--dry-run, so the 3 GB of torch are not installed). Fix 3: the cp311 wheel of the same release
installs (--no-deps: its torch 2.5.1 pin is not what is checked)."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
RELEASE = "xformers==0.0.28.post3"


def _wheel(ctx, tag: str):
    folder = _venv.cache_dir() / "wheels"
    env = _venv.venv(ctx, "fresh-" + b.PIP, pip=b.PIP)
    name = f"xformers-0.0.28.post3-{tag}-{tag}-manylinux_2_28_x86_64.whl"
    if not (folder / name).is_file():
        got = env.pip("download", "--no-deps", "--only-binary", ":all:", "--python-version", tag[2] + "." + tag[3:],
                      "--platform", "manylinux_2_28_x86_64", RELEASE, "-d", folder, timeout=600)
        if not (folder / name).is_file():
            ctx.skip(f"could not download {name}: {got.tail(300)}")
    return env, folder / name


def reproduce(ctx):
    env, wheel = _wheel(ctx, "cp312")
    res = env.pip("install", "--no-deps", wheel, timeout=300)
    ctx.note(res.summary())
    ctx.expect_error(_venv.raise_tool_message, "pip", res.output, ctx.record["template"])


def fix_1(ctx):
    b.pip_tags_fix(ctx, listed="cp311-cp311-manylinux_2_28_x86_64", absent="cp312-cp312")


def fix_2(ctx):
    res = b.fresh_install(ctx, "xformers==0.0.32.post2", extra=("--dry-run", "torch==2.8.0"))

    def resolves():
        if res.returncode != 0 or "Would install" not in res.output:
            raise AssertionError(res.tail(800))
        _venv.raise_tool_message("pip", res.output, ctx.record["template"])
        ctx.note([line for line in res.output.splitlines() if line.startswith("Would install")][0][:400])

    ctx.call(resolves)


def fix_3(ctx):
    env, wheel = _wheel(ctx, "cp311")
    target = _venv.venv(ctx, "fresh-" + b.PIP + "-xformers-target", pip=b.PIP)
    res = target.pip("install", "--no-deps", wheel, timeout=300)
    ctx.note(res.summary())

    def installed():
        _venv.raise_tool_message("pip", res.output, ctx.record["template"])
        if res.returncode != 0:
            raise AssertionError(res.tail(600))

    ctx.call(installed)
