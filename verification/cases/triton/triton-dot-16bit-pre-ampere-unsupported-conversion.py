"""Triton 3.3.x lowering a tl.dot on bf16 (or fp16) tiles for a GPU below sm80 prints
'Unsupported conversion from bf16 to f16' and LLVM's 'Unsupported rounding mode for conversion.'
on stderr, then (caught by its pass manager) the IR reproducer and RuntimeError('PassManager::run
failed').

No GPU is needed: each step compiles the attention score kernel `_kernels.scores_trans` (Q·Kᵀ of
one query block against one key block) for an explicit target with `triton.compile(...,
target=GPUTarget("cuda", cc, 32))`, in a child process (_compile.py) of a uv environment holding
only that Triton wheel. The two lines are read from the child's stderr; the fixes must compile down
to a cubin (Triton's bundled ptxas) without them. Nothing runs, so no numbers are compared."""

from verification.cases import _venv
from verification.cases.triton._compile import compile_in, compiled, outcome, triton_env

BACKEND = "triton"
REQUIRES = {"cuda": False}
TIMEOUT = 900

OLD = "3.3.1"  # 3.3.0 behaves the same (seen while writing the record)
NEW = "3.8.0"  # 3.4.0-3.9.0 compile the kernel for sm70/sm75 (seen while writing the record)
TILES = {"BLOCK_M": 32, "BLOCK_N": 32, "HEAD_DIM": 64}


def _scores(dtype, name="scores_trans"):
    return (name, {"Q": f"*{dtype}", "K": f"*{dtype}", "Out": "*fp32"}, TILES)


def _clean(ctx, result, what):
    """A claimed-good compile: it compiled, and the record's lines are not on its stderr."""
    compiled(ctx, result, what)
    if _venv.tool_message(result.get("stderr", ""), ctx.record["template"]):
        from errkb.verify.case import Refuted

        raise Refuted(f"{what}: compiled, but the record's lines are on stderr")


def reproduce(ctx):
    env = triton_env(ctx, OLD)
    fp16 = compile_in(ctx, env, _scores("fp16"), 75)
    ctx.note(f"the same kernel on fp16 tiles for sm75 with Triton {OLD}: {outcome(fp16)}; stderr holds: "
             + str(_venv.tool_message(fp16.get("stderr", ""), ctx.record["template"])))
    result = compile_in(ctx, env, _scores("bf16"), 75)
    ctx.note(f"scores_trans on bf16 tiles for sm75 with Triton {OLD}: {outcome(result)}")
    ctx.expect_error(_venv.raise_tool_message, "LLVM", result.get("stderr", ""), ctx.record["template"])


def fix_1(ctx):
    # Triton 3.4.0 or newer: the same bf16 kernel compiles for sm75 and sm70.
    env = triton_env(ctx, NEW)
    for cc in (75, 70):
        _clean(ctx, compile_in(ctx, env, _scores("bf16"), cc), f"bf16 scores_trans for sm{cc} with Triton {NEW}")


def fix_2(ctx):
    # Widen both tiles to fp32 before tl.dot: Triton 3.3.1 compiles it for sm75.
    env = triton_env(ctx, OLD)
    _clean(ctx, compile_in(ctx, env, _scores("bf16", "scores_trans_f32"), 75),
           f"bf16 tiles widened to fp32 before tl.dot, sm75, Triton {OLD}")


def fix_3(ctx):
    # An Ampere-or-newer target: the bf16 dot goes to tensor cores.
    env = triton_env(ctx, OLD)
    _clean(ctx, compile_in(ctx, env, _scores("bf16"), 80), f"bf16 scores_trans for sm80 with Triton {OLD}")


def control(ctx):
    # The same Triton and target without a 16-bit tl.dot: an element-wise kernel on sm75.
    env = triton_env(ctx, OLD)
    _clean(ctx, compile_in(ctx, env, ("exp_scores", {"S": "*fp32", "Out": "*fp32", "scale": "fp32"}, {"BLOCK": 128}), 75),
           f"exp_scores for sm75 with Triton {OLD}")
