"""SGLang's FlashAttention dispatcher refuses a mask_mod unless ver=4 (the FA3 path has no mask hook)."""

from verification.cases._common import TOL, cu_seqlens, first, randn, ref_attention

BACKEND = "sglang-server"
REQUIRES = {"packages": ["sglang.kernels.ops.attention.flash_attention"]}
STEP_REQUIRES = {"fix_1": {"cuda": True, "arch": "sm90+", "packages": ["sglang.kernels.ops.attention.flash_attn.cute"]}}
TIMEOUT = 600
S, H, D = 128, 4, 128
IMAGE = (32, 63)  # one image: these query rows also see each other's keys


def _image_inputs(ctx):
    t = ctx.torch
    q, k, v = (randn(ctx, S, H, D) for _ in range(3))
    cu = cu_seqlens(ctx, [S])
    ranges = t.full((S, 2), -1, dtype=t.int32, device=ctx.device)  # -1: a text token
    ranges[IMAGE[0]:IMAGE[1] + 1] = t.tensor(IMAGE, dtype=t.int32, device=ctx.device)
    return q, k, v, cu, ranges


def reproduce(ctx):
    from sglang.kernels.ops.attention.flash_attention import flash_attn_varlen_func, flash_attn_with_kvcache

    def keep_all(*args):  # never called: the dispatcher stops before any kernel
        return True

    q, k, v, cu, _ = _image_inputs(ctx)
    ctx.expect_error(flash_attn_with_kvcache, q[None], k[None], v[None], mask_mod=keep_all)
    ctx.expect_error(flash_attn_varlen_func, q, k, v, cu, cu, max_seqlen_q=S, max_seqlen_k=S,
                     mask_mod=keep_all, ver=3)


def fix_1(ctx):
    # ver=4 hands the mask to SGLang's vendored FA4: here SGLang's own image mask (causal text,
    # bidirectional inside an image), checked against an fp32 reference with the same mask.
    from sglang.kernels.ops.attention.flash_attention import flash_attn_varlen_func
    from sglang.kernels.ops.attention.flash_attention_v4 import make_image_mask_mod

    t = ctx.torch
    q, k, v, cu, ranges = _image_inputs(ctx)
    out = first(ctx.call(flash_attn_varlen_func, q, k, v, cu, cu, max_seqlen_q=S, max_seqlen_k=S,
                         causal=False, mask_mod=make_image_mask_mod(-1), aux_tensors=[ranges, cu], ver=4))
    i = t.arange(S, device=ctx.device)[:, None]
    j = t.arange(S, device=ctx.device)[None, :]
    lo, hi = IMAGE
    keep = (j <= i) | ((i >= lo) & (i <= hi) & (j >= lo) & (j <= hi))
    ctx.close(out, ref_attention(q[None], k[None], v[None], mask=keep)[0], **TOL)
