"""A Triton reduction called with keep_dims=True (Triton 3.0 and later) fails to compile on Triton
2.x: "sum() got an unexpected keyword argument 'keep_dims'" (a TypeError, appended to and chained
below Triton's CompilationError).

No GPU is needed: the front end raises while turning the kernel into IR. Each step compiles
`_kernels.row_norms_keep_dims` (the rows of a key block divided by their L2 norm kept as a column,
as block-sparse attention kernels score block similarity) for sm80 in a child process (_compile.py)
of a uv environment holding only that Triton wheel (Triton 2.3 imports numpy; nothing else).
Triton 2.x needs torch and a CUDA driver for its later stages, so the fixes are judged on what
compiles without them: fix 1 on Triton 3.0.0 down to a cubin; fix 2 (drop the keyword and index
the result) is not run here, since on Triton 2.x the compile then stops for want of torch and
libcuda, not for the kernel."""

from verification.cases import _builds as b
from verification.cases.triton._compile import compile_in, compiled, reraise, triton_env

BACKEND = "triton"
REQUIRES = {"cuda": False}
TIMEOUT = 900

OLD = "2.3.1"  # 2.2.0 raises the same (seen with torch 2.2.2's environment while writing the record)
NEW = "3.0.0"
NORMS = ("row_norms_keep_dims", {"X": "*fp16", "Out": "*fp32"}, {"BLOCK_M": 64, "HEAD_DIM": 64})


def reproduce(ctx):
    _, env = b.uv_env(ctx, f"triton-{OLD}-numpy", f"triton=={OLD}", "setuptools", "numpy<2")
    ctx.expect_error(lambda: reraise(compile_in(ctx, env, NORMS, 80)))


def fix_1(ctx):
    # Triton 3.0.0 (the release torch 2.4 pins) has keep_dims on its reductions.
    compiled(ctx, compile_in(ctx, triton_env(ctx, NEW), NORMS, 80), f"row_norms_keep_dims for sm80 with Triton {NEW}")


def fix_2(ctx):
    ctx.skip("on Triton 2.x a kernel that passes the front end still needs torch and libcuda to finish compiling")
