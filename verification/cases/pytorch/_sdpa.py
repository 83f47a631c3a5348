"""SDPA/FlexAttention helpers for the PyTorch cases."""

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


def compiled_flex():
    import torch
    from torch.nn.attention.flex_attention import flex_attention

    torch._dynamo.reset()
    return torch.compile(flex_attention, dynamic=False)
