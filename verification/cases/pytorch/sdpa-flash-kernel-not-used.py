"""When no allowed backend takes the call, SDPA explains why flash was skipped."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import fp32_flash, in_backends, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}


def reproduce(ctx):
    fp32_flash(ctx, ctx.expect_warning)


def fix_1(ctx):
    from torch.backends.cuda import SDPAParams, can_use_flash_attention

    t = ctx.torch
    q, k, v = qkv(ctx, dtype=t.float32)
    params = SDPAParams(q, k, v, None, 0.0, False, False)
    if ctx.call(can_use_flash_attention, params, False):
        from errkb.verify.case import Refuted

        raise Refuted("can_use_flash_attention accepted float32 inputs")
    qb, kb, vb = q.bfloat16(), k.bfloat16(), v.bfloat16()
    if not ctx.call(can_use_flash_attention, SDPAParams(qb, kb, vb, None, 0.0, False, False), False):
        from errkb.verify.case import Refuted

        raise Refuted("can_use_flash_attention rejected the corrected bf16 inputs")
    out = ctx.call(in_backends, ["FLASH_ATTENTION"], sdpa, qb, kb, vb)
    ctx.close(out, ref_attention(qb, kb, vb, layout="bhsd"), **TOL)
