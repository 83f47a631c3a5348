"""The FlashAttention Triton prototype's `tl.dot(q, k, trans_b=True)` under a Triton that has no
such keyword: Triton 3.6's tl.dot raises TypeError for it.

The kernel (verification/cases/triton/_proto.py) is a small attention forward with the
prototype's score line. On a GPU it is launched, so Triton's compiler meets the call and the
TypeError comes chained under its CompilationError (the class users see on top); on the CPU
Triton's interpreter (TRITON_INTERPRET=1's path) runs the same source and the TypeError comes
chained under its InterpreterError (run the CPU steps with TRITON_INTERPRET=1, which the
interpreter needs before triton is imported; without it they skip). Fix 1 is its first option as a call: PyTorch's SDPA on the
same tensors with an additive bias, as the prototype takes one. Fix 2 runs the kernel with
`tl.dot(q, tl.trans(k))`. Fix 3 (the pre-MLIR fork, built from source) has no step."""

from verification.cases._common import ref_attention
from verification.cases.triton import _proto

BACKEND = "triton"
REQUIRES = {"packages": ["torch", "triton"]}
TIMEOUT = 300


def reproduce(ctx):
    _proto.use_gpu_if_any(ctx)
    q, k, v = _proto.qkv(ctx)
    exc = ctx.expect_error(_proto.attention, ctx, _proto.attn_trans_b, q, k, v)
    ctx.note(f"on {ctx.device}: {ctx.observed.get('wrapped_in', type(exc).__name__)} on top, "
             f"TypeError chained: {exc}")


def fix_1(ctx):
    """PyTorch SDPA with an additive (ALiBi-like) bias instead of the Triton kernel."""
    _proto.use_gpu_if_any(ctx)
    t = ctx.torch
    q, k, v = _proto.qkv(ctx)
    pos = t.arange(_proto.L, device=ctx.device, dtype=t.float32)
    slopes = t.tensor([0.5, 0.25], device=ctx.device).view(1, _proto.H, 1, 1)
    bias = (-(pos[None, :] - pos[:, None]).abs() * slopes).to(q.dtype)
    out = ctx.call(t.nn.functional.scaled_dot_product_attention, q, k, v, attn_mask=bias)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=bias), **_proto.tol(ctx))


def fix_2(ctx):
    """The same kernel with tl.dot(q, tl.trans(k)): runs and gives softmax(q k^T * scale) v."""
    _proto.use_gpu_if_any(ctx)
    q, k, v = _proto.qkv(ctx)
    out = ctx.call(_proto.attention, ctx, _proto.attn_trans, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **_proto.tol(ctx))
