"""xformers.components' MultiHeadDispatch refuses a mask for an attention that cannot use one:
'This attention does not support attention masks' (an AssertionError).

Pure PyTorch, so it runs on a CPU: xformers 0.0.28.post3 (the last release with the deprecated
components) with torch 2.5.1, a Linformer attention (supports_attention_mask is False) in a
MultiHeadDispatch, called with a causal att_mask. Both fixes need a GPU (the block-sparse Triton
attention, memory_efficient_attention): skipped. The control is the same module without a mask."""

from verification.cases.xformers._xf import needs

BACKEND = "xformers"
REQUIRES = {"packages": ["torch", "xformers.components"]}
TIMEOUT = 180
SEQ, DIM, HEADS = 16, 32, 4


def _module(ctx):
    from xformers.components import MultiHeadDispatch, build_attention

    attention = build_attention({"name": "linformer", "dropout": 0.0, "seq_len": SEQ})
    ctx.note(f"{type(attention).__name__}.supports_attention_mask = {attention.supports_attention_mask}")
    return MultiHeadDispatch(dim_model=DIM, residual_dropout=0.0, num_heads=HEADS, attention=attention)


def reproduce(ctx):
    needs(ctx, below="0.0.29", why="xformers.components was removed in 0.0.29")
    t = ctx.torch
    mha, x = _module(ctx), t.randn(2, SEQ, DIM)
    ctx.expect_error(lambda: mha(query=x, key=x, value=x, att_mask=t.ones(SEQ, SEQ, dtype=t.bool).tril()))


def fix_1(ctx):
    ctx.skip("BlockSparseAttention is a Triton GPU kernel")


def fix_2(ctx):
    ctx.skip("memory_efficient_attention with LowerTriangularMask needs a GPU")


def control(ctx):
    needs(ctx, below="0.0.29", why="xformers.components was removed in 0.0.29")
    t = ctx.torch
    mha, x = _module(ctx), t.randn(2, SEQ, DIM)
    out = ctx.call(lambda: mha(query=x, key=x, value=x))
    ctx.close([int(t.isfinite(out).all()), *out.shape], [1, 2, SEQ, DIM], atol=0, what="finite output of the right shape")
