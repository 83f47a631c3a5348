"""`import flash_attn` where no flash-attn is installed: 'No module named 'flash_attn''.

Reproduce: a new environment (CPython 3.11, pip 26.3, nothing else), `python -c "import flash_attn"`.
Fix 2 as written: the interpreter prints its own path and its pip says flash-attn is not there, which
is what the fix uses to tell environments apart. Fix 1 ends in compiling flash-attn (the metadata step
with torch installed first is what flash-attn-build-torch-not-installed's fix 1 checked); fix 3 is
transformers' SDPA, checked by transformers-flash-attn-not-installed's fix 2."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 600


def reproduce(ctx):
    b.fresh_import_refused(ctx, "import flash_attn")


def fix_1(ctx):
    ctx.skip("ends in compiling flash-attn's CUDA kernels (hours here); the step up to the compile is "
             "flash-attn-build-torch-not-installed's fix 1")


def fix_2(ctx):
    env = _venv.venv(ctx, "fresh-" + b.PIP, pip=b.PIP)
    exe = env.python_run("import sys; print(sys.executable)")
    show = env.pip("show", "flash-attn", timeout=120)

    def tells():
        if exe.output.strip() != str(env.python):
            raise AssertionError(f"sys.executable is {exe.output.strip()!r}, not {env.python}")
        if show.returncode == 0 or "not found: flash-attn" not in show.output:
            raise AssertionError(f"pip show did not say flash-attn is missing: {show.tail(300)}")
        ctx.note(f"sys.executable = the environment's python; pip show: {show.output.strip().splitlines()[-1]}")

    ctx.call(tells)


def fix_3(ctx):
    ctx.skip("transformers' attn_implementation='sdpa' without flash-attn: run by transformers-flash-attn-not-installed's fix 2")
