"""Triton 3.3 and later lowering an int8 tl.dot for a GPU below sm80 print "'tt.fp_to_fp' op operand
#0 must be floating-point or ranked tensor of floating-point values, but got 'tensor<...xi8,
#ttg.dot_op<...>>'" (3.3.x) or "'arith.extf' op operand #0 must be floating-point-like, but got ..."
(3.4 and later) on stderr, then raise RuntimeError('PassManager::run failed').

No GPU is needed: each step compiles `_kernels.scores_int8` (Q·Kᵀ of int8-quantized tiles rescaled
to fp32, the product SageAttention's Triton QK kernel computes) for an explicit target in a child
process (_compile.py) of a uv environment holding only that Triton wheel. The verifier's line is
read from the child's stderr; the fixes must compile down to a cubin without it. Nothing runs."""

from verification.cases import _venv
from verification.cases.triton._compile import compile_in, compiled, triton_env

BACKEND = "triton"
REQUIRES = {"cuda": False}
TIMEOUT = 900

OLD = "3.3.1"  # 3.3.0 prints the same line; 3.4.0-3.9.0 the arith.extf one (seen while writing the record)
NEWER = "3.8.0"
GOOD = "3.2.0"  # 3.0.0 and 3.1.0 compile it for sm75 too
INT8 = ("scores_int8", {"Q": "*i8", "K": "*i8", "Out": "*fp32", "q_scale": "fp32", "k_scale": "fp32"},
        {"BLOCK_M": 64, "BLOCK_N": 64, "HEAD_DIM": 64})
EXP = ("exp_scores", {"S": "*fp32", "Out": "*fp32", "scale": "fp32"}, {"BLOCK": 128})


def _clean(ctx, result, what):
    """A claimed-good compile: it compiled, and the record's line is not on its stderr."""
    compiled(ctx, result, what)
    if _venv.tool_message(result.get("stderr", ""), ctx.record["template"]):
        from errkb.verify.case import Refuted

        raise Refuted(f"{what}: compiled, but the record's line is on stderr")


def reproduce(ctx):
    newer = compile_in(ctx, triton_env(ctx, NEWER), INT8, 75)
    ctx.note(f"scores_int8 for sm75 with Triton {NEWER}: " + ("compiled" if newer.get("ok") else "failed")
             + "; stderr holds: " + str(_venv.tool_message(newer.get("stderr", ""), ctx.record["template"])))
    result = compile_in(ctx, triton_env(ctx, OLD), INT8, 75)
    ctx.note(f"scores_int8 for sm75 with Triton {OLD}: " + ("compiled" if result.get("ok") else
             "raised " + "; ".join(f"{c['class']}: {c['message'][:120]}" for c in result.get("chain", []))))
    ctx.expect_error(_venv.raise_tool_message, "MLIR", result.get("stderr", ""), ctx.record["template"])


def fix_1(ctx):
    # On Turing, a Triton no newer than 3.2 still lowers the int8 product.
    _clean(ctx, compile_in(ctx, triton_env(ctx, GOOD), INT8, 75), f"scores_int8 for sm75 with Triton {GOOD}")


def fix_2(ctx):
    ctx.skip("switching the application's attention backend (ComfyUI without --use-sage-attention) is not run here")


def fix_3(ctx):
    # An Ampere target: int8 tensor-core instructions exist, the kernel compiles with the same Triton.
    _clean(ctx, compile_in(ctx, triton_env(ctx, OLD), INT8, 80), f"scores_int8 for sm80 with Triton {OLD}")


def control(ctx):
    # The same Triton and target without an int8 tl.dot.
    _clean(ctx, compile_in(ctx, triton_env(ctx, OLD), EXP, 75), f"exp_scores for sm75 with Triton {OLD}")
