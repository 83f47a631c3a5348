"""FA2's compiled forward needs stride 1 in q/k/v's last dim; the public wrappers copy, the raw op refuses."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}


def _inputs(ctx):
    """q built head-dim-major and permuted back: right shape, last stride = num_heads (not 1)."""
    _, k, v = fa.qkv(ctx)
    q = fa.randn(ctx, 2, 128, 128, 4).transpose(-1, -2)
    return q, k, v


def _raw_fwd(q, k, v, causal=False):
    """flash_attn_2_cuda.fwd with everything after q, k, v at its plain default; returns out
    (the op returns [out, softmax_lse, p, rng_state])."""
    out_, alibi, dropout, softcap, return_softmax, gen = None, None, 0.0, 0.0, False, None
    return fa.fa2_raw().fwd(q, k, v, out_, alibi, dropout, q.shape[-1] ** -0.5, causal, -1, -1, softcap,
                            return_softmax, gen)[0]


def reproduce(ctx):
    q, k, v = _inputs(ctx)
    assert q.stride(-1) != 1
    ctx.expect_error(_raw_fwd, q, k, v)


def _contiguous_then_raw(q, k, v, **kwargs):
    """The record's fix_1: copy only the tensors whose last stride is not 1."""
    q, k, v = (x if x.stride(-1) == 1 else x.contiguous() for x in (q, k, v))
    return _raw_fwd(q, k, v, **kwargs)


def fix_1(ctx):
    fa.runs_and_matches(ctx, _contiguous_then_raw, *_inputs(ctx))


def fix_2(ctx):
    fa.runs_and_matches(ctx, fa.fa2().flash_attn_func, *_inputs(ctx))


def control(ctx):
    fa.runs_and_matches(ctx, _raw_fwd, *fa.qkv(ctx), causal=True, ref={"causal": True})
