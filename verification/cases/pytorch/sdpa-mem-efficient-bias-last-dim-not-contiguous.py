"""The memory-efficient kernel given an additive bias whose key axis has a stride other than 1.

The bias is built as ComfyUI's T5 encoder built it (the record's fix 1 "before"): a (query, key,
heads) relative-position tensor permuted to (1, heads, query, key), so the key axis has stride
`heads`. Eager scaled_dot_product_attention copies such a mask before the kernel (the meaning), so
reproduce calls the aten op behind it, torch.ops.aten._efficient_attention_forward ((batch, seq,
heads, dim) layout), with that bias expanded over the batch; the step also notes what eager and
compiled SDPA (EFFICIENT_ATTENTION only) answer to the same mask.

fix 1: the fix's `.contiguous()`; both the aten op and SDPA with the efficient kernel forced run and
match fp32 attention with the same additive bias.
fix 2: skipped (updating ComfyUI, or going back to a PyTorch release, is an install on the user's side;
ComfyUI's change is fix 1's line).
fix 3: the fix's code under torch.compile (cuDNN and math backends, the mask made contiguous inside
the compiled function) runs and matches.
control: eager SDPA with the default backends and the permuted mask as it is runs and matches (on torch
2.11 it rules the memory-efficient kernel out for this mask and runs another; the reproduce step notes
what it answers when that kernel is the only one allowed)."""

from errkb.verify.case import attempt
from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import in_backends, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "packages": ["torch"]}
TIMEOUT = 600
B, H, S, D = 2, 4, 128, 64


def _inputs(ctx):
    t = ctx.torch
    ctx.seed(0)
    q, k, v = (t.randn(B, H, S, D, device="cuda", dtype=t.float16) for _ in range(3))
    rel_pos_bias = t.randn(S, S, H, device="cuda", dtype=t.float16)  # (query, key, heads)
    bias = rel_pos_bias.permute(2, 0, 1).unsqueeze(0)  # the record's "before": key axis stride H
    ctx.note(f"bias {tuple(bias.shape)} strides {bias.stride()}")
    return q, k, v, bias


def _efficient_op(q, k, v, bias):
    """The aten op with SDPA's (batch, heads, seq, dim) tensors turned into its (batch, seq, heads, dim)."""
    import torch

    out = torch.ops.aten._efficient_attention_forward(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), bias.expand(B, H, S, S),
        None, None, None, None, 0.0, 0, False)[0]
    return out.transpose(1, 2)


def _ref(q, k, v, bias):
    return ref_attention(q, k, v, layout="bhsd", mask=bias.float())


def _what(fn, *args, **kwargs):
    _, exc = attempt(fn, *args, **kwargs)
    return "runs" if exc is None else f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"


def reproduce(ctx):
    q, k, v, bias = _inputs(ctx)
    ctx.expect_error(_efficient_op, q, k, v, bias)
    ctx.note("eager SDPA, EFFICIENT_ATTENTION only, same mask: "
             + _what(in_backends, ["EFFICIENT_ATTENTION"], sdpa, q, k, v, attn_mask=bias))
    ctx.torch._dynamo.reset()
    compiled = ctx.torch.compile(lambda *a, **kw: in_backends(["EFFICIENT_ATTENTION"], sdpa, *a, **kw))
    ctx.note("torch.compile'd SDPA, EFFICIENT_ATTENTION only, same mask: " + _what(compiled, q, k, v, attn_mask=bias))


def fix_1(ctx):
    q, k, v, bias = _inputs(ctx)
    bias = bias.contiguous()  # the fix
    ref = _ref(q, k, v, bias)
    ctx.close(ctx.call(_efficient_op, q, k, v, bias), ref, what="aten op", **TOL)
    ctx.close(ctx.call(in_backends, ["EFFICIENT_ATTENTION"], sdpa, q, k, v, attn_mask=bias), ref, what="SDPA", **TOL)


def fix_2(ctx):
    ctx.skip("updating ComfyUI or going back to a stable PyTorch is an install on the user's machine; "
             "ComfyUI's change (commit 170c7bb) is fix 1's .contiguous()")


def fix_3(ctx):
    t = ctx.torch
    q, k, v, mask = _inputs(ctx)

    def attention(q, k, v, mask):
        from torch.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH]):
            return t.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask.contiguous())

    t._dynamo.reset()
    out = ctx.call(t.compile(attention), q, k, v, mask)
    ctx.close(out, _ref(q, k, v, mask), **TOL)


def control(ctx):
    q, k, v, bias = _inputs(ctx)
    out = ctx.call(sdpa, q, k, v, attn_mask=bias)
    ctx.close(out, _ref(q, k, v, bias), **TOL)
