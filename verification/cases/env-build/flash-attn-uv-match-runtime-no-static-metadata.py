"""uv cannot honour `match-runtime = true` for a flash-attn sdist without static metadata: 'Extra build
requirement `torch` was declared with `match-runtime = true`, but `flash-attn` does not declare static
metadata, making runtime-matching impossible'.

Reproduce: uv 0.9.0, `uv lock` of a project (CPython 3.11) depending on flash-attn==2.7.3 and torch,
with [tool.uv.extra-build-dependencies] flash-attn = [{ requirement = "torch", match-runtime = true }].
The same project with flash-attn==2.8.1 or 2.8.3 locks without the error under uv 0.9.0 (noted by the
reproduce step; `uv sync` then goes on to build). Fix 1: the fix's [[tool.uv.dependency-metadata]]
entry (version set to the pinned 2.7.3) locks, and `uv sync` gets to building flash-attn (stopped
there: the compile is not run). Fix 2: `flash-attn = ["torch==2.14.1"]` locks (uv builds flash-attn's
metadata with that torch), and sync gets to the build. Fix 3 as written fails at `uv lock` on
`No module named 'setuptools'` (the project environment is empty); with its caveat's sequence
(`uv pip install torch setuptools` into the project environment first) uv lock still fails, on
`No module named 'psutil'` (2.7.3's setup.py imports it in its build command) after wheel: with
torch, setuptools, wheel and psutil installed first it locks and sync gets to the build. Fix 4 needs GitHub."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
HEAD = """[project]
name = "demo"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["flash-attn=={fa}", "torch"]
"""
MATCH = """
[tool.uv.extra-build-dependencies]
flash-attn = [{ requirement = "torch", match-runtime = true }]
"""
METADATA = """
[[tool.uv.dependency-metadata]]
name = "flash-attn"
version = "2.7.3"
requires-dist = ["torch", "einops"]
"""
PINNED = """
[tool.uv.extra-build-dependencies]
flash-attn = ["torch==2.14.1"]
"""
NO_ISOLATION = """
[tool.uv]
no-build-isolation-package = ["flash-attn"]
"""
BUILDING = r"Building flash-attn|Failed to build `flash-attn"


def _project(ctx, name: str, text: str):
    tool = _venv.venv(ctx, f"uv-{b.UV}-tool", install=[f"uv=={b.UV}"])
    folder = _venv._tmp_root() / "uv-projects" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(text)
    (folder / "uv.lock").unlink(missing_ok=True)
    return tool, folder


def _uv(tool, folder, *args, stop_at=None, timeout=900):
    return _venv.run([tool.bin("uv"), *args, "--python", _venv.interpreter()], cwd=folder, timeout=timeout,
                     stop_at=stop_at)


def reproduce(ctx):
    for fa in ("2.8.1", "2.8.3"):
        tool, folder = _project(ctx, f"match-{fa}", HEAD.format(fa=fa) + MATCH)
        res = _uv(tool, folder, "lock")
        ctx.note(f"flash-attn=={fa}: uv lock exit {res.returncode}"
                 + (" (the record's message)" if _venv.tool_message(res.output, ctx.record["template"]) else ", no such message"))
    tool, folder = _project(ctx, "match-2.7.3", HEAD.format(fa="2.7.3") + MATCH)
    res = _uv(tool, folder, "lock")
    ctx.note(f"uv {b.UV}, flash-attn==2.7.3: uv lock exit {res.returncode}")
    ctx.expect_error(_venv.raise_tool_message, "uv", res.output, ctx.record["template"])


def _locks_and_builds(ctx, tool, folder, before=()):
    for argv in before:
        got = _venv.run([tool.bin("uv"), *argv], cwd=folder, timeout=1200)
        ctx.note(f"uv {' '.join(map(str, argv[:3]))}...: exit {got.returncode}")
    lock = _uv(tool, folder, "lock")
    sync = _uv(tool, folder, "sync", "-v", stop_at=BUILDING, timeout=1200) if lock.returncode == 0 else None

    def check():
        _venv.raise_tool_message("uv", lock.output, ctx.record["template"])
        if lock.returncode != 0:
            raise AssertionError(f"uv lock failed: {lock.tail(600)}")
        _venv.raise_tool_message("uv", sync.output, ctx.record["template"])
        if not sync.stopped:
            raise AssertionError(f"uv sync did not get to building flash-attn: {sync.tail(600)}")
        ctx.note("uv lock: exit 0; uv sync got to building flash-attn (stopped there: the compile is not run)")

    ctx.call(check)


def fix_1(ctx):
    tool, folder = _project(ctx, "fix-1", HEAD.format(fa="2.7.3") + MATCH + METADATA)
    _locks_and_builds(ctx, tool, folder)


def fix_2(ctx):
    tool, folder = _project(ctx, "fix-2", HEAD.format(fa="2.7.3") + PINNED)
    _locks_and_builds(ctx, tool, folder)


def fix_3(ctx):
    tool, folder = _project(ctx, "fix-3", HEAD.format(fa="2.7.3") + NO_ISOLATION)
    bare = _uv(tool, folder, "lock")
    causes = _venv.exception_lines(bare.output)
    ctx.note(f"as written: uv lock exit {bare.returncode}" + (f" ({causes[-1][0]}: {causes[-1][1]})" if causes else ""))
    venv = folder / ".venv"
    _locks_and_builds(ctx, tool, folder, before=[
        ["venv", "-q", venv, "--python", _venv.interpreter()],
        ["pip", "install", "--python", venv / "bin" / "python", *b.torch_requirement(), "setuptools", "wheel", "psutil"]])


def fix_4(ctx):
    ctx.skip("points flash-attn at a GitHub release wheel: only PyPI is reachable from this machine")
