"""jvp_flash_attention's backward asserts that the sequence length is a multiple of 32 (BLOCK_MIN); its
forward has no such check, so a run fails only at backward().

jvp_flash_attention 0.10.0 (PyPI wheel, carried in .gpu/v11 by the .gpu/v11 builder (docs/verification.md): the GPU
image has no network), imported from the unpacked wheel; its Triton kernels need a CUDA GPU. q, k, v are
float16 (1, 2, N, 64) in its (batch, heads, seq, head_dim) layout.

reproduce: N=100: the forward runs (noted), backward() raises the record's AssertionError.
fix 1: the fix's code as written (pad to 128, a boolean key mask expanded over heads and rows, drop the
padded rows): forward and backward run; output and q/k/v gradients match float32 attention on the
unpadded inputs.
fix 2: N=100 routed to F.scaled_dot_product_attention: runs, output and gradients match.
control: N=128, no padding: forward and backward run and match."""

import sys

from verification.cases import _carried
from verification.cases._common import TOL, ref_attention

BACKEND = "triton"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch", "triton"]}
TIMEOUT = 600
GRAD_TOL = {"atol": 5e-2, "rtol": 5e-2}  # float16 gradients against float32 ones


def _jvp(ctx):
    root = str(_carried.wheel(ctx, "jvp_flash_attention-0.10.0-*.whl"))
    if root not in sys.path:
        sys.path.insert(0, root)
    from jvp_flash_attention.jvp_attention import attention

    return attention


def _qkv(ctx, n):
    t = ctx.torch
    ctx.seed(0)
    return tuple(t.randn(1, 2, n, 64, device="cuda", dtype=t.float16, requires_grad=True) for _ in range(3))


def _grads(fn, q, k, v, g):
    for x in (q, k, v):
        x.grad = None
    out = fn(q, k, v)
    out.backward(g)
    return out, [x.grad.clone() for x in (q, k, v)]


def _matches(ctx, fn, n):
    q, k, v = _qkv(ctx, n)
    g = ctx.torch.randn_like(q)
    out, grads = ctx.call(_grads, fn, q, k, v, g)
    qf, kf, vf = (x.detach().float().requires_grad_() for x in (q, k, v))
    ref, ref_grads = _grads(lambda a, b, c: ref_attention(a, b, c, layout="bhsd"), qf, kf, vf, g.float())
    ctx.close(out, ref, **TOL)
    for name, got, want in zip("qkv", grads, ref_grads):
        ctx.close(got, want, what=f"d{name}", **GRAD_TOL)


def reproduce(ctx):
    attention = _jvp(ctx)
    q, k, v = _qkv(ctx, 100)
    out = attention(q, k, v)
    ctx.note(f"forward with N=100 ran: output {tuple(out.shape)}")
    ctx.expect_error(out.backward, ctx.torch.randn_like(out))


def fix_1(ctx):
    jvp_attention = _jvp(ctx)
    torch = ctx.torch
    F = torch.nn.functional

    def padded(q, k, v):  # the record's fix, as written
        n = q.shape[2]
        pad = (-n) % 32
        q2, k2, v2 = (F.pad(t, (0, 0, 0, pad)) for t in (q, k, v))
        keep = torch.arange(n + pad, device=q.device) < n
        mask = keep.view(1, 1, 1, -1).expand(q.shape[0], q.shape[1], n + pad, n + pad)
        return jvp_attention(q2, k2, v2, attn_mask=mask)[:, :, :n]

    _matches(ctx, padded, 100)


def fix_2(ctx):
    jvp_attention = _jvp(ctx)
    F = ctx.torch.nn.functional

    def routed(q, k, v):  # the record's fix, as written
        return jvp_attention(q, k, v) if q.shape[2] % 32 == 0 else F.scaled_dot_product_attention(q, k, v)

    _matches(ctx, routed, 100)


def control(ctx):
    _matches(ctx, _jvp(ctx), 128)
