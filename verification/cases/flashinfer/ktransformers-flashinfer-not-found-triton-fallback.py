"""KTransformers' ktransformers/operators/flashinfer_wrapper.py prints 'flashinfer not found, use triton for
linux' when `import flashinfer` raises ImportError at import time, and sets flashinfer_enabled to False.

KTransformers is not on PyPI in this form; the case reads kvcache-ai/ktransformers at git tag v0.2.4post1
(6617549d), exported from a local clone (verification/cases/_downstream.py): the package's two light
`__init__` files, operators/flashinfer_wrapper.py, the Triton decode kernels it imports
(operators/triton_attention.py) and util/vendors.py, which those import; nothing of it is committed, nothing
is stood in. Environment: with_cpu_torch() (torch 2.13.0+cpu, local wheel) with Triton 3.5.1 (the cached
Linux wheel, `pip --target --no-deps`; triton_attention.py imports triton before the wrapper tries
flashinfer). The child imports the wrapper from the exported tree as KTransformers' own modules do.

Reproduce: with flashinfer absent the import prints the record's line and flashinfer_enabled is False. Fix 1
(nothing to do: the Triton MLA path takes over) is a claim about generation on a GPU: skipped. Fix 2: the
fix's check names the missing module; with flashinfer-python 0.5.3 importable (its pure-Python wheel,
`--no-deps`, with what `import flashinfer` needs: verification/cases/_flashinfer_jit.py) the same import
prints 'found flashinfer' instead and flashinfer_enabled is True."""

from verification.cases import _builds as b
from verification.cases import _downstream, _flashinfer_jit, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
REPO = "kvcache-ai/ktransformers"
TAG = "6617549de0d1f40b0e9254105be7dcc11bf97de5"  # v0.2.4post1
FILES = ("ktransformers/__init__.py", "ktransformers/operators/__init__.py",
         "ktransformers/operators/flashinfer_wrapper.py", "ktransformers/operators/triton_attention.py",
         "ktransformers/util/vendors.py")
TRITON = "triton==3.5.1"
FLASHINFER = "0.5.3"
CHILD = ("import ktransformers.operators.flashinfer_wrapper as w\n"
         "print('ERRKB-ENABLED', w.flashinfer_enabled, flush=True)\n")
CHECK = "import flashinfer; print(flashinfer.__version__, flashinfer.__file__)"

_runs: dict = {}


def _triton(ctx, env: _venv.Venv) -> str:
    folder = b.cached_triton(ctx, TRITON, env)
    ctx.note(f"{TRITON} (cached wheel, pip --target --no-deps)")
    return folder


def _run(ctx, with_flashinfer: bool) -> _venv.Run:
    if with_flashinfer not in _runs:
        env, extra = _flashinfer_jit.site(ctx, FLASHINFER) if with_flashinfer else (b.with_cpu_torch(ctx), [])
        _venv.noted(ctx, env)
        root = _downstream.tree(ctx, REPO, TAG, FILES)
        _runs[with_flashinfer] = b.run_with_torch(ctx, CHILD, env=env, path=[str(root), _triton(ctx, env), *extra])
    res = _runs[with_flashinfer]
    ctx.note(f"import ktransformers.operators.flashinfer_wrapper ({'flashinfer-python ' + FLASHINFER if with_flashinfer else 'no flashinfer'}): "
             + " | ".join(line.strip() for line in res.output.splitlines()
                          if "flashinfer" in line or line.startswith("ERRKB-"))[:400])
    return res


def reproduce(ctx):
    res = _run(ctx, False)
    ctx.expect_error(_venv.printed_after, res, "ERRKB-ENABLED False",
                     "the wrapper did not import with flashinfer_enabled False", "print", ctx.record["template"])


def fix_1(ctx):
    ctx.skip("the Triton MLA fallback runs KTransformers' DeepSeek attention on a CUDA GPU; a CPU cannot show generation")


def fix_2(ctx):
    check = b.with_cpu_torch(ctx).python_run(CHECK)
    cause = _venv.last_exception(check.output, 200)
    ctx.note(f"`python -c {CHECK!r}` without flashinfer: {cause}")
    res = _run(ctx, True)

    def found():
        if "No module named 'flashinfer'" not in cause:
            raise AssertionError(f"the check did not name the missing module: {check.tail(300)}")
        _venv.raise_tool_message("print", res.output, ctx.record["template"])
        if "ERRKB-ENABLED True" not in res.output or "found flashinfer" not in res.output:
            _venv.reraise(res.output)
            raise AssertionError(f"the wrapper did not find flashinfer: {res.tail(400)}")
    ctx.call(found)
