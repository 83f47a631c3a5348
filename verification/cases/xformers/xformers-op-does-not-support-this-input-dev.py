"""xFormers dev builds of December 2022 - January 2023 with a forced op=: "xformers.memory_efficient_attention:
Operator flshattF does not support this input".

No tagged release has the wording, so the Python files come from the git commit just before the rewording
(ac5fd496^ = b4d8ae36, "More user-friendly error message when C++ lib can't be loaded"; the check was
added by ba1e9b16), exported from a local clone of facebookresearch/xformers (ERRKB_VERIFY_GIT), without the
compiled _C (not built: the forward checks run in Python before any kernel). Environment: Python 3.10.13,
PyPI's torch 1.13.1 (the torch of the 0.0.16 line) and numpy<2.

Reproduce: memory_efficient_attention(q, k, v, op=MemoryEfficientAttentionFlashAttentionOp) with head dim
512 (over flshattF's 128, the record's example; float32 CPU tensors, also refused) raises the record's
ValueError, no reason given. Fix 1 (let xFormers pick) needs the compiled kernels of that commit: skipped.
Fix 2: the released 0.0.16 (PyPI cp310 wheel, its _C loads next to torch 1.13.1) refuses the same call with
the reworded error that lists the reasons."""

from verification.cases import _builds as b
from verification.cases import _downstream
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
COMMIT = "b4d8ae36"  # ac5fd496^

CALL = """
import torch, xformers, xformers.ops as xops
print('xformers', getattr(xformers, '__version__', '?'), 'torch', torch.__version__, '_C loaded:', xformers._has_cpp_library, flush=True)
q = torch.randn(1, 16, 1, 512)
xops.memory_efficient_attention(q, q, q, op=xops.MemoryEfficientAttentionFlashAttentionOp)
print('ran', flush=True)
"""


def call(ctx, folder: str, what: str) -> _venv.Run:
    res = b.run_with_torch(ctx, CALL, env=b.torch_1_13_py310(ctx), path=[folder])
    ctx.note(f"{what}: " + " | ".join(ln for ln in res.output.splitlines() if ln.startswith(("xformers", "ran")))
             + f"; {_venv.last_exception(res.output, 400)}")
    return res


def reproduce(ctx):
    tree = _downstream.tree(ctx, "facebookresearch/xformers", COMMIT, ["xformers"])
    res = call(ctx, str(tree), f"xformers' Python files at {COMMIT} (no compiled _C)")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"], "ValueError")


def fix_1(ctx):
    ctx.skip("the dispatcher's pick runs a compiled kernel of that commit: needs xformers built from it (a CUDA build)")


def fix_2(ctx):
    folder = b.xformers_0_0_16(ctx)
    res = call(ctx, str(folder), "xformers 0.0.16 (PyPI cp310 wheel, --no-deps --target)")
    causes = _venv.exception_lines(res.output)

    def says_why():
        if not causes:
            raise AssertionError(f"no error: {res.tail(300)}")
        if "does not support this input" in causes[-1][1]:
            raise AssertionError("0.0.16 still prints the old wording")
        if "is not supported because" not in res.output:
            raise AssertionError(f"not the reworded error: {causes[-1]}")
        ctx.note("0.0.16's error lists: " + " | ".join(
            ln.strip() for ln in res.output.splitlines()[-12:] if ln.strip() and not ln.startswith(("  File", "    raise"))))
    ctx.call(says_why)
