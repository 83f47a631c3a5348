"""FA2 needs num_heads divisible by num_heads_k; SDPA-layout tensors make it test seqlen_q % seqlen_k."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}

# fix_3 (choose a tensor-parallel size that divides both head counts) is deployment advice: no step.


def _bhsd(ctx):
    """(batch, heads, seqlen, dim) tensors, 96 queries over 128 keys: FA2 reads 96 'heads' over 128."""
    return fa.qkv(ctx, sq=96, sk=128, layout="bhsd")


def reproduce(ctx):
    ctx.expect_error(fa.fa2().flash_attn_func, *_bhsd(ctx), causal=True)


def fix_1(ctx):
    q, k, v = _bhsd(ctx)
    out = fa.first(ctx.call(fa.fa2().flash_attn_func, q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                            causal=True)).transpose(1, 2)
    ctx.close(out, fa.ref_attention(q, k, v, layout="bhsd", causal=True), **fa.TOL)


def fix_2(ctx):
    # 12 query heads and 8 KV heads: gather one KV head per query head (here head h reads h * 8 // 12)
    t = ctx.torch
    q, k, v = fa.qkv(ctx, hq=12, hk=8)
    kv_head_of_q_head = t.arange(12, device=ctx.device) * 8 // 12
    k, v = k[:, :, kv_head_of_q_head], v[:, :, kv_head_of_q_head]
    fa.runs_and_matches(ctx, fa.fa2().flash_attn_func, q, k, v)


def control(ctx):
    fa.runs_and_matches(ctx, fa.fa2().flash_attn_func, *fa.qkv(ctx, hq=8, hk=2), causal=True, ref={"causal": True})
