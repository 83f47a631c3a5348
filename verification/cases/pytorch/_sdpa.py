"""SDPA/FlexAttention helpers for the PyTorch cases."""

from verification.cases._common import TOL, ref_attention
from verification.cases._common import qkv as _qkv


def qkv(ctx, **kw):
    kw.setdefault("layout", "bhsd")
    return _qkv(ctx, **kw)


def padding_mask(ctx, length=128, keep=100):
    """A boolean (length, length) mask that hides the keys from `keep` on: a typical padding mask."""
    t = ctx.torch
    m = t.ones(length, length, dtype=t.bool, device=ctx.device)
    m[:, keep:] = False
    return m


def sdpa(*args, **kwargs):
    import torch.nn.functional as F

    return F.scaled_dot_product_attention(*args, **kwargs)


def only(*names):
    """sdpa_kernel restricted to the named backends (FLASH_ATTENTION, EFFICIENT_ATTENTION, ...)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([getattr(SDPBackend, n) for n in names])


def in_backends(names, fn, *args, **kwargs):
    with only(*names):
        return fn(*args, **kwargs)


def gpu_if_any(ctx):
    """For checks PyTorch makes in Python before any kernel runs (argument types, shapes, a
    warning): put the tensors on the GPU where there is one, as users have them, else on the CPU,
    so the same step runs in the CPU tests too. The step's notes say which."""
    if ctx.torch.cuda.is_available():
        ctx.device = "cuda"
    ctx.note(f"tensors on {ctx.device}")


def note_backends(ctx, names, fn, *args, **kwargs):
    """Not part of the verdict: what each named SDPA backend alone answers to the same call,
    kept in the step's notes (which kernel's code path the default call went through)."""
    from errkb.verify.case import attempt

    for name in names:
        _, exc = attempt(in_backends, [name], fn, *args, **kwargs)
        what = "runs" if exc is None else f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        ctx.note(f"{name} alone: {what}")


def compiled_flex():
    import torch
    from torch.nn.attention.flex_attention import flex_attention

    torch._dynamo.reset()
    return torch.compile(flex_attention, dynamic=False)


# ---------------------------------------------------------------- shared SDPA steps


def masked_flash(ctx, check):
    """Flash alone, given a padding mask it cannot take: run it under `check` (expect_warning or
    expect_error), since SDPA both explains the skip and, with no other backend, refuses."""
    q, k, v = qkv(ctx)
    return check(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v, attn_mask=padding_mask(ctx))


def fp32_flash(ctx, check):
    """Flash alone on float32 inputs, which it does not take, under `check`."""
    q, k, v = qkv(ctx, dtype=ctx.torch.float32)
    return check(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v)


def causal_flash_matches(ctx):
    """Flash with is_causal instead of a mask runs and matches the causal reference."""
    q, k, v = qkv(ctx)
    out = ctx.call(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v, is_causal=True)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **TOL)


def masked_with_efficient_matches(ctx):
    """Allowing the memory-efficient kernel next to flash: the masked call runs and matches."""
    q, k, v = qkv(ctx)
    m = padding_mask(ctx)
    out = ctx.call(in_backends, ["FLASH_ATTENTION", "EFFICIENT_ATTENTION"], sdpa, q, k, v, attn_mask=m)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=m), **TOL)


# ---------------------------------------------------------------- FlexAttention on the CPU

FP32 = {"atol": 1e-4, "rtol": 1e-4}  # float32 kernels against the float32 reference


def causal(b, h, q_idx, kv_idx):
    """The mask_mod of plain causal attention."""
    return q_idx >= kv_idx


def flex_qkv(ctx, sq=128, sk=128, **kw):
    """Small float32 q, k, v in SDPA's layout, as the CPU FlexAttention cases use."""
    return qkv(ctx, b=1, sq=sq, sk=sk, d=16, dtype=ctx.torch.float32, **kw)


def causal_block_mask(ctx, q, k, batch=None):
    """A causal BlockMask sized for these q and k."""
    from torch.nn.attention.flex_attention import create_block_mask

    return create_block_mask(causal, batch, None, q.size(-2), k.size(-2), device=ctx.device)


def close_causal(ctx, out, q, k, v):
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left"), **FP32)
