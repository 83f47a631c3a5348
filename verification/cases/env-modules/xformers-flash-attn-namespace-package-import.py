"""xFormers 0.0.30-0.0.35 decide whether flash-attn is there with importlib's find_spec, which also
finds a `flash_attn` folder without __init__.py (flash-attn-4's wheels, a leftover of an
uninstall); their unconditional `import flash_attn.flash_attn_interface` then fails and
xformers.ops does not import at all.

Environment: xformers 0.0.32.post2 (PyPI wheel, --no-deps, pip --target) on with_cpu_torch()'s
torch 2.13.0+cpu, with CUDA 12's runtime library from nvidia-cuda-runtime-cu12 12.8.90 on
LD_LIBRARY_PATH (xformers' compiled parts, built for torch 2.8.0 and CUDA 12.8, load it when
xformers.ops imports; without it that import stops at `libcudart.so.12` on a machine with no CUDA). The steps run Python in a
folder of their own that holds an empty `flash_attn/` folder, as a leftover would be.

Reproduce: `import xformers.ops` there raises the record's message from xformers/ops/fmha/flash.py.
Fix 1: the fix's check names the folder that provides `flash_attn`. Fix 2: once that folder is
removed, find_spec finds no flash_attn and the record's error is gone; the rest of the import needs
a CUDA build of torch (xformers' extensions link libc10_cuda.so), so it is not claimed here."""

import shutil

from errkb import templates
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
XFORMERS = "xformers==0.0.32.post2"
CUDART = "nvidia-cuda-runtime-cu12==12.8.90"
CHECK = "import flash_attn; print('path', list(flash_attn.__path__), getattr(flash_attn, '__file__', None))"


def _setup(ctx, leftover: bool = True):
    env = b.with_cpu_torch(ctx)
    site = b.target_dir(ctx, XFORMERS, no_deps=True, env=env)
    cudart = b.target_dir(ctx, CUDART, no_deps=True, env=env)
    folder = _venv._tmp_root() / "leftover-flash-attn"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    if leftover:
        (folder / "flash_attn").mkdir()
    return env, site, folder, {"LD_LIBRARY_PATH": f"{cudart}/nvidia/cuda_runtime/lib"}


def reproduce(ctx):
    env, site, folder, extra = _setup(ctx)
    res = b.run_with_torch(ctx, "import xformers.ops", path=[site], cwd=folder, env=env, extra_env=extra)
    ctx.note("`import xformers.ops` beside an empty flash_attn/: " + _venv.last_exception(res.output))
    if "xformers/ops/fmha/flash.py" not in res.output:
        ctx.note("the traceback does not name xformers/ops/fmha/flash.py")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    env, site, folder, extra = _setup(ctx)
    res = b.run_with_torch(ctx, CHECK, path=[site], cwd=folder, env=env, extra_env=extra)
    shown = next((line for line in res.output.splitlines() if line.startswith("path ")), "")
    ctx.note(f"the fix's check: {shown or _venv.last_exception(res.output)}")

    def check():
        if str(folder / "flash_attn") not in shown or "None" not in shown:
            raise AssertionError(f"the check did not name the folder without __init__.py: {res.tail(300)}")
    ctx.call(check)


def fix_2(ctx):
    # Removing the folder: find_spec no longer finds flash_attn, so flash.py takes its PyTorch-flash
    # branch and the record's error is gone. The whole import cannot finish here: xformers' compiled
    # parts link against torch's CUDA libraries (libc10_cuda.so), which a CPU torch does not have.
    env, site, folder, extra = _setup(ctx, leftover=False)
    code = "import importlib.util; print('spec', importlib.util.find_spec('flash_attn'), flush=True); import xformers.ops"
    res = b.run_with_torch(ctx, code, path=[site], cwd=folder, env=env, extra_env=extra)
    spec = next((line for line in res.output.splitlines() if line.startswith("spec ")), "")
    ctx.note(f"without the folder: {spec}; `import xformers.ops`: "
             + ("imported" if res.returncode == 0 else _venv.last_exception(res.output)))

    def check():
        if spec != "spec None":
            raise AssertionError(f"flash_attn is still found: {spec!r}")
        if templates.search_regex(ctx.record["template"]).search(res.output):
            raise AssertionError("the record's error is still raised")
    ctx.call(check)
