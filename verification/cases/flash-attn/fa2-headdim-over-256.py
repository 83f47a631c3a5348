"""FA2's forward refuses head dims above 256; a whole hidden size passed as one 'head' is the usual cause."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}

HEADS, HIDDEN = 4, 512

# fix_3 (FA3 on Hopper with Q/K <= 64 and a V up to 512 wide) has no step: it needs FA3's hdim-64
# kernels, which the H200's reduced FA3 build leaves out, and there a 64-wide call would be sent to
# the 128-wide kernel instead of being refused.


def _one_head(ctx):
    """Projections of hidden size 512 viewed as (b, s, 1, hidden): one 'head' of size 512."""
    q, k, v = fa.qkv(ctx, hq=HEADS, hk=HEADS, d=HIDDEN // HEADS)
    return tuple(x.reshape(x.shape[0], x.shape[1], 1, HIDDEN) for x in (q, k, v))


def reproduce(ctx):
    q, k, v = _one_head(ctx)
    ctx.expect_error(fa.fa2().flash_attn_func, q, k, v, causal=True)


def fix_1(ctx):
    q, k, v = (x.view(x.shape[0], x.shape[1], HEADS, HIDDEN // HEADS) for x in _one_head(ctx))
    fa.runs_and_matches(ctx, fa.fa2().flash_attn_func, q, k, v, causal=True, ref={"causal": True})


def fix_2(ctx):
    # heads that really are 512 wide, through PyTorch SDPA (it picks a kernel that takes them)
    F = ctx.torch.nn.functional
    q, k, v = fa.qkv(ctx, hq=2, hk=2, d=HIDDEN, layout="bhsd")
    out = ctx.call(F.scaled_dot_product_attention, q, k, v, is_causal=True)
    ctx.close(out, fa.ref_attention(q, k, v, layout="bhsd", causal=True), **fa.TOL)


def control(ctx):
    q, k, v = fa.qkv(ctx)
    fa.runs_and_matches(ctx, fa.fa2().flash_attn_func, q, k, v, causal=True, ref={"causal": True})
