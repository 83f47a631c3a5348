"""tl.dot(a, b, trans_b=True), written for the pre-MLIR Triton, fails to compile on Triton 2.0.0
and newer: 'dot() got an unexpected keyword argument 'trans_b'' (a TypeError, chained below
Triton's CompilationError).

The kernel (verification/cases/triton/_kernels.py, scores_trans_b) is the score product of an
attention kernel written that way; it is compiled for sm80 with `triton.compile(...,
target=GPUTarget("cuda", 80, 32))` in a child process (_compile.py): the front end raises before
anything needs a GPU. Fix 2 (an explicit tl.trans) must compile down to a cubin; nothing runs.
Fix 1 (MPT's attn_impl='torch') needs the model's remote code and fix 3 a pre-MLIR Triton build
from a git branch: neither is run here."""

from pathlib import Path

from verification.cases.triton._compile import compile_for, compiled, reraise

BACKEND = "triton"
REQUIRES = {"packages": ["triton"]}
TIMEOUT = 300

KERNELS = str(Path(__file__).with_name("_kernels.py"))
TILES = {"BLOCK_M": 32, "BLOCK_N": 32, "HEAD_DIM": 64}
SIG = {"Q": "*fp16", "K": "*fp16", "Out": "*fp32"}


def reproduce(ctx):
    ctx.expect_error(lambda: reraise(compile_for(ctx, KERNELS, "scores_trans_b", SIG, TILES, 80)))


def fix_1(ctx):
    ctx.skip("MPT's attn_config['attn_impl'] = 'torch' lives in the model's remote code (a Hub download)")


def fix_2(ctx):
    compiled(ctx, compile_for(ctx, KERNELS, "scores_trans", SIG, TILES, 80), "tl.dot(q, tl.trans(k)) for sm80")


def fix_3(ctx):
    ctx.skip("the pre-MLIR Triton is a git branch build (triton-pre-mlir), not a release this machine can install")
