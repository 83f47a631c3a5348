"""Triton's NVIDIA backend refuses fp8e4nv (torch.float8_e4m3fn) for a target below sm89 while it
compiles the kernel: 'type fp8e4nv not supported in this architecture. The supported fp8 dtypes
are (...)' (Triton 3.5.1; 3.0.0 asserts with other words: triton-fp8e4nv-requires-cuda-arch-89).

No GPU is needed to see it: the check is made from the compile target, so each step compiles an
attention score kernel whose K cache is read as fp8 (verification/cases/triton/_kernels.py) for
an explicit target with `triton.compile(..., target=GPUTarget("cuda", cc, 32))`, in a child
process (_compile.py). The fixes are compile checks too: each must compile down to a cubin
(Triton's bundled ptxas) for the stated target; nothing runs, so no numbers are compared."""

from importlib import metadata

from verification.cases.triton._compile import cached_k_scores, compiled, reraise

BACKEND = "triton"
REQUIRES = {"packages": ["triton"]}
TIMEOUT = 300


def _needs_new_wording(ctx):
    v = metadata.version("triton")
    if tuple(int(x) for x in v.split(".")[:2]) < (3, 5):
        ctx.skip(f"the record quotes Triton 3.5.1's wording; this is Triton {v} (3.0.0 words it as an assertion, "
                 "another record; releases in between were not read)")


def reproduce(ctx):
    _needs_new_wording(ctx)
    ctx.expect_error(lambda: reraise(cached_k_scores(ctx, "*fp8e4nv", 80)))


def fix_1(ctx):
    # A 16-bit cache instead of e4m3: the same kernel compiles for sm80.
    compiled(ctx, cached_k_scores(ctx, "*fp16", 80), "fp16 K cache for sm80")


def fix_2(ctx):
    # The e5m2 format, which every NVIDIA target offers.
    compiled(ctx, cached_k_scores(ctx, "*fp8e5", 80), "fp8e5 (float8_e5m2) K cache for sm80")


def fix_3(ctx):
    # An SM89+ GPU: e4m3 compiles for sm89.
    compiled(ctx, cached_k_scores(ctx, "*fp8e4nv", 89), "fp8e4nv K cache for sm89")
