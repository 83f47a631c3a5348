"""A dense attn_bias whose row stride is not a multiple of 8 (fp16): cutlassF's block of the
refusal says 'attn_bias.stride(-2) % 8 != 0 (attn_bias.stride() = (...))'.

On a CPU-only machine with the real wheel (0.0.28.post3 with torch 2.5.1): a (1, 2, 16, 15) fp16
bias for 15 keys. The fixes end in the CUTLASS kernel running on a GPU, so they are skipped; fix 1's
skip reason says what the kernel's own check (cutlass FwOp.not_supported_reasons) answers for the
padded-and-sliced bias on this machine."""

from verification.cases.xformers._xf import cpu_qkv, mea

BACKEND = "xformers"
REQUIRES = {"packages": ["torch", "xformers.ops"]}
TIMEOUT = 180
KEYS = 15


def _inputs(ctx):
    t = ctx.torch
    q, _, _ = cpu_qkv(ctx)
    _, k, v = cpu_qkv(ctx, s=KEYS)
    return q, k, v


def reproduce(ctx):
    t = ctx.torch
    q, k, v = _inputs(ctx)
    bias = t.randn(1, 2, q.shape[1], KEYS, dtype=t.float16)
    ctx.expect_error(mea, q, k, v, attn_bias=bias)


def fix_1(ctx):
    from xformers.ops import fmha

    t = ctx.torch
    q, k, v = _inputs(ctx)
    n_pad = (KEYS + 7) // 8 * 8
    bias = t.zeros(1, 2, q.shape[1], n_pad, dtype=t.float16)[..., :KEYS]
    reasons = fmha.cutlass.FwOp.not_supported_reasons(fmha.Inputs(q, k, v, attn_bias=bias))
    ctx.skip("the CUTLASS kernel running needs a GPU; on this machine its check lists only "
             f"{reasons!r} for the padded bias (strides {tuple(bias.stride())})")


def fix_2(ctx):
    ctx.skip("the CUTLASS kernel running with LowerTriangularMask needs a GPU")
