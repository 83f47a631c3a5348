"""FA3's forward takes attention_chunk, but its autograd backward asserts attention_chunk == 0."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn_interface", "flash_attn_3"]}

L, CHUNK = 256, 64
GRAD_TOL = {"atol": 5e-2, "rtol": 5e-2}  # bf16 gradients vs fp32 autograd


def _chunk_mask(ctx):
    """Causal attention that stays inside fixed CHUNK-sized blocks of positions (keep = True)."""
    t = ctx.torch
    i = t.arange(L, device=ctx.device)[:, None]
    j = t.arange(L, device=ctx.device)[None, :]
    return (j <= i) & (j // CHUNK == i // CHUNK)


def _inputs(ctx):
    return fa.qkv(ctx, b=1, sq=L, sk=L, requires_grad=True)


def _forward_backward(fn, *args, **kwargs):
    """Forward through fn, then backward with a fixed upstream gradient; returns the output."""
    out = fa.first(fn(*args, **kwargs))
    out.backward(_upstream(out))
    return out


def _upstream(out):
    """A fixed upstream gradient (seeded) so the check does not depend on a structured loss."""
    import torch

    g = torch.Generator(device=out.device).manual_seed(1)
    return torch.randn(out.shape, generator=g, device=out.device, dtype=out.dtype)


def _grads_match(ctx, out, q, k, v, **ref):
    """out matches the fp32 reference, and q/k/v.grad match fp32 autograd through it."""
    qf, kf, vf = (x.detach().float().requires_grad_() for x in (q, k, v))
    expected = fa.ref_attention(qf, kf, vf, **ref)
    expected.backward(_upstream(out).float())
    ctx.close(out, expected, **fa.TOL)
    for name, got, want in (("dq", q.grad, qf.grad), ("dk", k.grad, kf.grad), ("dv", v.grad, vf.grad)):
        ctx.close(got, want, what=name, **GRAD_TOL)


def reproduce(ctx):
    ctx.expect_error(_forward_backward, fa.fa3().flash_attn_func, *_inputs(ctx), causal=True, attention_chunk=CHUNK)


def fix_1(ctx):
    # every chunk is its own sequence in a causal varlen call (batch 1 of length L)
    t = ctx.torch
    q, k, v = _inputs(ctx)
    bounds = t.arange(0, L + 1, CHUNK, dtype=t.int32, device=ctx.device)
    cu = t.unique(t.cat([bounds, bounds.new_tensor([L])]))
    out = ctx.call(_forward_backward, fa.fa3().flash_attn_varlen_func, q[0], k[0], v[0], cu, cu, CHUNK, CHUNK,
                   causal=True)
    _grads_match(ctx, out[None], q, k, v, mask=_chunk_mask(ctx))


def fix_2(ctx):
    t = ctx.torch
    q, k, v = _inputs(ctx)
    with t.no_grad():
        out = fa.first(ctx.call(fa.fa3().flash_attn_func, q, k, v, causal=True, attention_chunk=CHUNK))
    fa.matches(ctx, out, q, k, v, mask=_chunk_mask(ctx))


def control(ctx):
    q, k, v = _inputs(ctx)
    out = ctx.call(_forward_backward, fa.fa3().flash_attn_func, q, k, v, causal=True)
    _grads_match(ctx, out, q, k, v, causal=True)
