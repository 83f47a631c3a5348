"""When no allowed backend takes the call, SDPA explains why the memory-efficient kernel was skipped."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import in_backends, masked_flash, masked_with_efficient_matches, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}


def reproduce(ctx):
    masked_flash(ctx, ctx.expect_warning)


def fix_1(ctx):
    masked_with_efficient_matches(ctx)


def fix_2(ctx):
    q, k, v = qkv(ctx, hq=8, hk=2)
    groups = q.size(1) // k.size(1)
    out = ctx.call(in_backends, ["EFFICIENT_ATTENTION"], sdpa, q, k.repeat_interleave(groups, 1),
                   v.repeat_interleave(groups, 1))
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)
