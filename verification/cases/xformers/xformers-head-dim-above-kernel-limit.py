"""A head dim above a kernel's limit: 'max(query.shape[-1], value.shape[-1]) > N' in that kernel's
block of the refusal (xformers 0.0.28 and later; '!=' in place of ',' up to 0.0.27).

On a CPU-only machine with the real wheel (0.0.28.post3 with torch 2.5.1): head dim 512 on CPU
tensors; fa2F's block says '... > 256' (next to the device reason every block has here). Both
fixes are about a kernel then running on a GPU: skipped."""

from verification.cases.xformers._xf import cpu_qkv, mea, needs

BACKEND = "xformers"
REQUIRES = {"packages": ["torch", "xformers.ops"]}
TIMEOUT = 180


def reproduce(ctx):
    needs(ctx, low="0.0.28", why="the ',' wording of the reason")
    ctx.expect_error(mea, *cpu_qkv(ctx, d=512))


def fix_1(ctx):
    ctx.skip("the CUTLASS kernel then running the call needs a GPU")


def fix_2(ctx):
    ctx.skip("the reshaped call then running needs a GPU")
