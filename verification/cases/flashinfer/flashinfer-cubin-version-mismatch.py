"""`import flashinfer` refuses a flashinfer-cubin of another release: "flashinfer-cubin version (0.6.1) does
not match flashinfer version (0.5.3)".

flashinfer-python 0.5.3 (PyPI wheel, `--no-deps`, next to torch 2.13.0+cpu: _flashinfer_jit.py) with
flashinfer-cubin 0.6.1 from PyPI (`--no-deps --target`, a folder of its own on the path), the record's
pair. The check runs when flashinfer.jit.env is imported, before any device is asked for, so this machine
(no GPU) meets it as a GPU machine would.

Reproduce: `import flashinfer` raises the record's RuntimeError; the notes say what 0.7.2 does with the
same cubin package (the record: it logs 'Ignoring incompatible flashinfer-cubin package' and imports).
Fix 1: flashinfer-cubin at the flashinfer-python release (0.5.3 and 0.5.3): the import runs and FlashInfer
takes its cubins from the package. Fix 2: without the companion package the import runs. Fix 3:
FLASHINFER_DISABLE_VERSION_CHECK=1 with the mismatched pair: the import runs."""

from verification.cases import _builds as b
from verification.cases import _flashinfer_jit as fi
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
VERSION = "0.5.3"
STALE_CUBIN = "0.6.1"
IMPORT = ("import flashinfer\n"
          "print('versions', flashinfer.__version__)\n"
          "from flashinfer.jit import env as jit_env\n"
          "print('cubin dir', jit_env.FLASHINFER_CUBIN_DIR)\n")


def cubin(ctx, version: str) -> str:
    env = b.with_cpu_torch(ctx)
    folder = b.pip_target(ctx, f"target-flashinfer-cubin-{version}", "--no-deps", f"flashinfer-cubin=={version}",
                          env=env, what=f"flashinfer-cubin {version}")
    ctx.note(f"flashinfer-cubin {version} (PyPI, --no-deps --target)")
    return str(folder)


def imported(ctx, version: str, cubin_version: str | None, **extra_env) -> _venv.Run:
    return fi.run(ctx, version, IMPORT, extra_path=[cubin(ctx, cubin_version)] if cubin_version else [],
                  extra_env=extra_env, must_import=False)


def _takes_package_cubins(res, cubin_version: str | None):
    _venv.finished(res, "cubin dir", "import flashinfer")
    where = next(ln for ln in res.output.splitlines() if ln.startswith("cubin dir"))
    if cubin_version and f"target-flashinfer-cubin-{cubin_version}" not in where:
        raise AssertionError(f"FlashInfer does not take its cubins from the installed package: {where}")
    return where


def reproduce(ctx):
    res = imported(ctx, VERSION, STALE_CUBIN)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])
    newer = fi.run(ctx, "0.7.2", "import logging\nlogging.basicConfig(level=logging.WARNING)\n" + IMPORT,
                   extra_path=[cubin(ctx, STALE_CUBIN)], must_import=False)
    warned = [ln.strip() for ln in newer.output.splitlines() if "Ignoring incompatible flashinfer-cubin" in ln]
    ctx.note("flashinfer-python 0.7.2 with flashinfer-cubin 0.6.1: "
             + ("imported" if "cubin dir" in newer.output else "did not import: " + _venv.last_exception(newer.output, 200))
             + "; " + (f"logged {warned[0][:300]!r}" if warned else "logged no 'Ignoring incompatible flashinfer-cubin' line"))


def fix_1(ctx):
    res = imported(ctx, VERSION, VERSION)
    ctx.note(ctx.call(_takes_package_cubins, res, VERSION))


def fix_2(ctx):
    res = imported(ctx, VERSION, None)
    ctx.note(ctx.call(_takes_package_cubins, res, None))


def fix_3(ctx):
    res = imported(ctx, VERSION, STALE_CUBIN, FLASHINFER_DISABLE_VERSION_CHECK="1")
    ctx.note(ctx.call(_takes_package_cubins, res, STALE_CUBIN))
