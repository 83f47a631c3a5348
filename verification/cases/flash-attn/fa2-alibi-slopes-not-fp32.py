"""FA2 refuses ALiBi slopes that are not float32 (e.g. a slopes buffer cast to bf16 with the model)."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}


def _slopes(ctx, h=4):
    """The usual ALiBi slopes 2^(-8 i / h), kept the way a model buffer ends up after .bfloat16()."""
    t = ctx.torch
    return (2.0 ** (-8.0 * t.arange(1, h + 1, device=ctx.device) / h)).to(t.bfloat16)


def _bias(ctx, slopes, sq, sk):
    """FA2's ALiBi term -slope * |i + sk - sq - j| as an additive mask; slopes (h,) or (b, h)."""
    t = ctx.torch
    i = t.arange(sq, device=ctx.device)[:, None]
    j = t.arange(sk, device=ctx.device)[None, :]
    dist = (i + sk - sq - j).abs().float()
    s = slopes.float()
    return -(s[None, :, None, None] if s.dim() == 1 else s[:, :, None, None]) * dist


def reproduce(ctx):
    q, k, v = fa.qkv(ctx)
    ctx.expect_error(fa.fa2().flash_attn_func, q, k, v, causal=True, alibi_slopes=_slopes(ctx))


def fix_1(ctx):
    q, k, v = fa.qkv(ctx)
    slopes = _slopes(ctx).float()  # the fix: cast at the call site
    mask = _bias(ctx, slopes, q.shape[1], k.shape[1])
    fa.runs_and_matches(ctx, fa.fa2().flash_attn_func, q, k, v, causal=True, alibi_slopes=slopes,
                        ref={"causal": True, "mask": mask})


def control(ctx):
    # per-batch fp32 slopes (batch, heads), non-causal: the symmetric |i - j| form of the bias
    q, k, v = fa.qkv(ctx, sq=96)
    slopes = ctx.torch.stack([_slopes(ctx).float(), _slopes(ctx).float() / 2])
    mask = _bias(ctx, slopes, q.shape[1], k.shape[1])
    fa.runs_and_matches(ctx, fa.fa2().flash_attn_func, q, k, v, alibi_slopes=slopes, ref={"mask": mask})
