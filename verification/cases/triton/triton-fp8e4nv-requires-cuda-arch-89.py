"""Triton 3.0.x asserts 'fp8e4nv data type is not supported on CUDA arch < 89' when a kernel casts
from or to fp8e4nv (torch.float8_e4m3fn) while compiling for a target below sm89.

The check is made from the compile target, so no GPU is needed: an attention score kernel that
reads a K cache as fp8 and widens it to fp16 (verification/cases/triton/_kernels.py) is compiled
for sm80 with `triton.compile(..., target=GPUTarget("cuda", 80, 32))` in a child process
(_compile.py). The fixes compile the same kernel with a 16-bit or an e5m2 cache down to a cubin
(Triton's bundled ptxas); nothing runs, so no numbers are compared."""

from importlib import metadata

from verification.cases.triton._compile import cached_k_scores, compiled, reraise

BACKEND = "triton"
REQUIRES = {"packages": ["triton"]}
TIMEOUT = 300


def reproduce(ctx):
    v = metadata.version("triton")
    if not v.startswith("3.0."):
        ctx.skip(f"the record is about Triton 3.0.x's assertion; this is Triton {v}")
    ctx.expect_error(lambda: reraise(cached_k_scores(ctx, "*fp8e4nv", 80)))


def fix_1(ctx):
    compiled(ctx, cached_k_scores(ctx, "*fp16", 80), "fp16 K cache for sm80")


def fix_2(ctx):
    compiled(ctx, cached_k_scores(ctx, "*fp8e5", 80), "fp8e5 (float8_e5m2) K cache for sm80")
