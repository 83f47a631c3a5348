"""nn.MultiheadAttention checks a 2-D attn_mask against (query length, key length) as it reads
them after its own layout handling: a batch_first=True module given (seq, batch, embed) tensors,
as code written for open_clip 2.24 hands its 77-token text batch to a 2.26+ transformer, reads
the batch size as the sequence length, and the 77 x 77 causal mask no longer fits.

The check is Python code in torch.nn.functional, the same on every device: the steps use the GPU
where there is one, else the CPU (their notes say which). float32 inputs; the references apply
the module's own projections around the fp32 reference attention with the same mask. Fix 2
(pinning open-clip-torch 2.24.0) has no step: it needs open_clip, not installed where these run."""

from errkb.verify.case import Refuted
from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import gpu_if_any

BACKEND = "sdpa"
REQUIRES = {"packages": ["torch"]}
TIMEOUT = 120
FP32 = {"atol": 1e-3, "rtol": 1e-3}
CTX, WIDTH, HEADS = 77, 64, 4  # CLIP's text context length; a small width


def _mha(ctx, batch_first=True):
    return ctx.torch.nn.MultiheadAttention(WIDTH, HEADS, batch_first=batch_first).to(ctx.device)


def _causal_mask(ctx):
    """CLIP's text mask: -inf above the diagonal, 0 elsewhere (CTX x CTX, float)."""
    t = ctx.torch
    return t.full((CTX, CTX), float("-inf"), device=ctx.device).triu_(1)


def _tokens(ctx, batch):
    """Token embeddings as the model holds them: (batch, seq, width)."""
    return ctx.torch.randn(batch, CTX, WIDTH, device=ctx.device)


def _reference(mha, x, mask):
    """What the module computes on batch-first x with this mask, written out."""
    import torch.nn.functional as F

    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)
    b_q, b_k, b_v = mha.in_proj_bias.chunk(3)
    n, length, e = x.shape
    heads = [F.linear(x, w, b).view(n, length, HEADS, e // HEADS) for w, b in ((w_q, b_q), (w_k, b_k), (w_v, b_v))]
    out = ref_attention(*heads, layout="bshd", mask=mask).reshape(n, length, e)
    return F.linear(out, mha.out_proj.weight, mha.out_proj.bias)


def _old_caller(mha, x, mask):
    """Code written for the sequence-first transformer: permute NLD -> LND, call, permute back."""
    y = x.permute(1, 0, 2)
    out, _ = mha(y, y, y, need_weights=False, attn_mask=mask)
    return out.permute(1, 0, 2)


def _fixed_caller(mha, x, mask):
    """Fix 1's "after": permute only when the module is not batch-first."""
    batch_first = getattr(mha, "batch_first", False)
    y = x if batch_first else x.permute(1, 0, 2)
    out, _ = mha(y, y, y, need_weights=False, attn_mask=mask)
    return out if batch_first else out.permute(1, 0, 2)


def reproduce(ctx):
    """A batch of one prompt gives 'should be (1, 1)'; a batch of four, '(4, 4)'."""
    gpu_if_any(ctx)
    mha, mask = _mha(ctx), _causal_mask(ctx)
    seen = []
    for batch in (4, 1):  # the last one's observation stays: the record's example
        exc = ctx.expect_error(_old_caller, mha, _tokens(ctx, batch), mask)
        want = f"but should be ({batch}, {batch})"
        if want not in str(exc):
            raise Refuted(f"batch {batch}: expected '{want}' in the message, got: {exc}")
        seen.append(str(exc))
    ctx.note("messages: " + " | ".join(seen))


def fix_1(ctx):
    """The fixed caller on a batch-first module and on a sequence-first one: both run with the
    77 x 77 mask and give the module's causal attention."""
    gpu_if_any(ctx)
    mask = _causal_mask(ctx)
    x = _tokens(ctx, 4)
    for batch_first in (True, False):
        mha = _mha(ctx, batch_first=batch_first)
        out = ctx.call(_fixed_caller, mha, x, mask)
        with ctx.torch.no_grad():
            ctx.close(out, _reference(mha, x, mask), **FP32)


def control(ctx):
    """The old caller is right for the layout it was written for: a sequence-first module."""
    gpu_if_any(ctx)
    mha, mask, x = _mha(ctx, batch_first=False), _causal_mask(ctx), _tokens(ctx, 4)
    out = ctx.call(_old_caller, mha, x, mask)
    with ctx.torch.no_grad():
        ctx.close(out, _reference(mha, x, mask), **FP32)
