"""FlashMLA's source checkout ahead of any installed build: `import flash_mla` finds the checkout's
flash_mla/ (Python files only) and its interface's `import flash_mla.cuda` fails with
"No module named 'flash_mla.cuda'".

Environment: with_cpu_torch() (torch 2.13.0+cpu; flash_mla_interface.py imports torch before the
extension); FlashMLA's tree at commit 9241ae3 (deepseek-ai/FlashMLA, exported from a local clone by
verification/cases/_downstream.py; nothing of it is committed here), no FlashMLA installed.

Reproduce: `PYTHONPATH=. python -c "import flash_mla"` from the checkout's root (what the tests and
benchmark scripts do first when run from there, as the record's fix 2 writes it) stops on the record's
message. The step notes two more runs: the test script of fix 2's "before" itself, which in this CPU
environment stops earlier on `No module named 'triton'` (its tests/kernelkit imports Triton, which a CUDA
build of torch brings along), and the same import in the tree of commit c2067be (before the rename to
flash_mla.cuda), which the record's meaning says names `flash_mla_cuda`. Fix 1: the fix's command, run from
the same place, prints the checkout's flash_mla folder (not a site-packages one). Fix 2 (an installed
or in-place CUDA build of FlashMLA's sm90/sm100 kernels) needs a CUDA compile of hours with the cutlass
submodule, and a Hopper GPU to use it: skipped."""

from verification.cases import _builds as b
from verification.cases import _downstream, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
REPO = "deepseek-ai/FlashMLA"
COMMIT = "9241ae3ef9bac614dd25e45e507e089f888280e0"
BEFORE_RENAME = "c2067be"  # builds a top-level flash_mla_cuda
FIX_1 = "import importlib.util as u; print('locations', u.find_spec('flash_mla').submodule_search_locations)"


def _checkout(ctx, commit=COMMIT):
    return _downstream.tree(ctx, REPO, commit, ("flash_mla", "tests", "setup.py"))


def _run(ctx, argv, cwd):
    env = b.with_cpu_torch(ctx)
    res = _venv.run([env.python, *argv], cwd=cwd, timeout=300,
                    env=_venv.tool_env(VIRTUAL_ENV=str(env.path), PYTHONPATH="."))
    ctx.note(f"PYTHONPATH=. {res.summary()} in the checkout's root: {_venv.last_exception(res.output, 200)}")
    return res


def reproduce(ctx):
    root = _checkout(ctx)
    res = _run(ctx, ["-c", "import flash_mla"], root)
    _run(ctx, ["tests/test_flash_mla_dense_decoding.py"], root)
    old = _run(ctx, ["-c", "import flash_mla"], _checkout(ctx, BEFORE_RENAME))
    ctx.note(f"tree {BEFORE_RENAME} (before the rename): {_venv.last_exception(old.output, 200)}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    root = _checkout(ctx)
    res = _run(ctx, ["-c", FIX_1], root)

    def shows_checkout():
        line = _venv.printed(res, "locations ")
        if str(root / "flash_mla") not in line or "site-packages" in line:
            raise AssertionError(f"the check did not point at the checkout: {line}")
        ctx.note(f"the check printed {line}")
    ctx.call(shows_checkout)


def fix_2(ctx):
    ctx.skip("needs FlashMLA's CUDA extension built (sm90/sm100 kernels with the cutlass submodule: hours of "
             "compiling on two cores) and a Hopper or Blackwell GPU to load it")
