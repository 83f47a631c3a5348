"""The FlashAttention Triton prototype's score line `qk += tl.dot(q, k, trans_b=True)` fails to
compile under Triton 3.6: a CompilationError whose source excerpt ends at that line.

The kernel (verification/cases/triton/_proto.py) is a small attention forward with the
prototype's score line. On a GPU it is launched (Triton compiles it first); on the CPU, Triton's
compiler is run on it for an sm90 target (triton.compile with GPUTarget("cuda", 90, 32): the same
front end and NVIDIA back end a launch on an H100 runs, without launching anything; the steps'
notes say which). Fix 1 is its first option as a call: PyTorch's SDPA with an additive bias, as
the prototype takes one. Fix 2's edited kernel must compile (for sm90, on the CPU) and, launched
on a GPU, give the reference's numbers. Fix 3 (the pre-MLIR fork) has no step. The CPU steps
need TRITON_INTERPRET unset (the compiler does not run in an interpreter process)."""

from errkb.verify.case import Refuted
from verification.cases._common import ref_attention
from verification.cases.triton import _proto

BACKEND = "triton"
REQUIRES = {"packages": ["torch", "triton"]}
TIMEOUT = 300


def _compile_or_launch(ctx, fn):
    if ctx.device == "cuda":
        q, k, v = _proto.qkv(ctx)
        return _proto.attention(ctx, fn, q, k, v)
    ctx.note(f"{fn.__name__}: Triton's compiler for an sm90 target on the CPU (nothing launched)")
    return _proto.compile_for_sm90(fn)


def reproduce(ctx):
    _proto.use_gpu_if_any(ctx)
    exc = ctx.expect_error(_compile_or_launch, ctx, _proto.attn_trans_b)
    cause = exc.__cause__
    ctx.note(f"chained below: {type(cause).__name__}: {cause}" if cause is not None else "nothing chained below")
    if "trans_b" not in str(exc).strip().splitlines()[-1]:
        ctx.note("the message's last line does not name trans_b")


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
    """tl.dot(q, tl.trans(k)) compiles, and the kernel gives softmax(q k^T * scale) v."""
    _proto.use_gpu_if_any(ctx)
    if ctx.device != "cuda":
        compiled = ctx.call(_proto.compile_for_sm90, _proto.attn_trans)
        if not getattr(compiled, "asm", {}).get("cubin"):
            raise Refuted("the edited kernel compiled to no cubin for sm90")
        ctx.note("attn_trans compiled for sm90 (cubin present); its numbers are checked where it is launched "
                 "(a GPU), and in Triton's interpreter by triton-dot-unexpected-keyword-trans-b's fix 2")
        return
    q, k, v = _proto.qkv(ctx)
    out = ctx.call(_proto.attention, ctx, _proto.attn_trans, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **_proto.tol(ctx))
