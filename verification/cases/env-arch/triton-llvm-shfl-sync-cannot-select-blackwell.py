"""Triton 3.0-3.2 compiling a kernel with a cross-lane reduction (a row max or sum, as in every
attention softmax) for sm_120: their LLVM does not know the processor and aborts with "LLVM ERROR:
Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32".

No GPU is needed: each step compiles the row-softmax kernel of verification/cases/triton/_kernels.py
for an explicit target in a child process of a uv environment holding only that Triton wheel
(verification/cases/triton/_compile.py); the abort is read from the child's stderr. Reproduce:
3.1.0 for sm_120 aborts with the record's line. Fix 1: 3.3.0 compiles the same kernel for sm_120.
Control: 3.1.0 compiles it for sm_90."""

from verification.cases import _venv
from verification.cases.triton._compile import SOFTMAX_ROWS, compile_in, compiled, outcome, triton_env

BACKEND = "triton"
REQUIRES = {"cuda": False}
TIMEOUT = 900
OLD, NEW = "3.1.0", "3.3.0"


def _compile(ctx, version: str, cc: int):
    result = compile_in(ctx, triton_env(ctx, version), SOFTMAX_ROWS, cc)
    ctx.note(f"softmax_rows for sm{cc} with Triton {version}: {outcome(result)}")
    return result


def reproduce(ctx):
    result = _compile(ctx, OLD, 120)
    ctx.expect_error(_venv.raise_tool_message, "LLVM", result.get("stderr", ""), ctx.record["template"])


def fix_1(ctx):
    compiled(ctx, _compile(ctx, NEW, 120), f"softmax_rows for sm120 with Triton {NEW}")


def control(ctx):
    compiled(ctx, _compile(ctx, OLD, 90), f"softmax_rows for sm90 with Triton {OLD}")
