"""When no allowed backend takes the call, SDPA explains why cuDNN was skipped (often: not enabled)."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import in_backends, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}


def reproduce(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx)
    m = t.ones(128, 128, dtype=t.bool, device=ctx.device)
    ctx.expect_warning(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v, attn_mask=m)


def fix_1(ctx):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = qkv(ctx)
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION], set_priority=True):
        out = ctx.call(sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)
