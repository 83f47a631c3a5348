"""scaled_dot_product_attention's keyword arguments grew: `scale` from torch 2.1, `enable_gqa`
from 2.5; an older torch refuses them by name with a TypeError before anything runs.

The reproduce step needs a torch older than 2.5 and passes the newest keyword that release lacks
(2.0.x: `scale`, 2.1-2.4: `enable_gqa`), noting what the release answers to each of the two
(run on torch 2.0.1 and 2.4.1, CPU, each in an environment of its own). Fix 1 (torch 2.5 or newer)
passes both and compares with the reference, and notes what a keyword of another attention API
(`softmax_scale`) gets. Fixes 2 and 3 run on any torch, the old ones included; the control is the
same call without either keyword."""

from errkb.verify.case import Refuted, attempt
from verification.cases._common import ref_attention

BACKEND = "sdpa"
REQUIRES = {"packages": ["torch"], "torch": ">=2.0"}  # 1.x has no SDPA at all (sdpa-missing-torch-before-2)
STEP_REQUIRES = {"reproduce": {"torch": "<2.5"}, "fix_1": {"torch": ">=2.5"}}
TIMEOUT = 120
FP32 = {"atol": 1e-4, "rtol": 1e-4}
SCALE = 0.05


def _sdpa(*args, **kwargs):
    import torch.nn.functional as F

    return F.scaled_dot_product_attention(*args, **kwargs)


def _qkv(ctx, hk=4):
    t = ctx.torch
    return t.randn(2, 4, 16, 32), t.randn(2, hk, 16, 32), t.randn(2, hk, 16, 32)


def _release(t):
    return tuple(int(x) for x in t.__version__.split("+")[0].split(".")[:2])


def _answers(ctx, q, k, v):
    """What this release says to each keyword (noted, no verdict)."""
    for kw in ({"scale": SCALE}, {"enable_gqa": True}):
        _, exc = attempt(_sdpa, q, k, v, **kw)
        ctx.note(f"torch {ctx.torch.__version__}, {next(iter(kw))}=: "
                 + ("accepted" if exc is None else f"{type(exc).__name__}: {exc}"))


def reproduce(ctx):
    t = ctx.torch
    if _release(t) < (2, 0):  # STEP_REQUIRES holds one bound; the file's ">=2.0" is replaced by "<2.5" here
        ctx.skip(f"needs torch >=2.0 (this is {t.__version__}): 1.x has no scaled_dot_product_attention")
    q, k, v = _qkv(ctx)
    _answers(ctx, q, k, v)
    newest = "scale" if _release(t) < (2, 1) else "enable_gqa"
    exc = ctx.expect_error(_sdpa, q, k, v, **({"scale": SCALE} if newest == "scale" else {"enable_gqa": True}))
    if f"'{newest}'" not in str(exc):
        raise Refuted(f"expected the refusal to name {newest!r}: {exc}")


def fix_1(ctx):
    """torch 2.5+: scale and enable_gqa (2 key/value heads for 4 query heads) are taken."""
    q, k, v = _qkv(ctx, hk=2)
    out = ctx.call(_sdpa, q, k, v, scale=SCALE, enable_gqa=True)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", scale=SCALE), **FP32)
    _, exc = attempt(_sdpa, q, q, q, softmax_scale=SCALE)
    ctx.note("softmax_scale= (flash_attn_func's name): " + ("accepted" if exc is None else f"{type(exc).__name__}: {exc}"))


def fix_2(ctx):
    """Fold the scale into q: the default 1/sqrt(d) times s*sqrt(d) is s."""
    t = ctx.torch
    q, k, v = _qkv(ctx)
    m = t.ones(16, 16, dtype=t.bool).tril()
    out = ctx.call(_sdpa, q * (SCALE * q.size(-1) ** 0.5), k, v, attn_mask=m)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", scale=SCALE, mask=m), **FP32)


def fix_3(ctx):
    """Repeat each key/value head instead of enable_gqa."""
    q, k, v = _qkv(ctx, hk=2)
    rep = q.size(-3) // k.size(-3)
    k2, v2 = k.repeat_interleave(rep, dim=-3), v.repeat_interleave(rep, dim=-3)
    out = ctx.call(_sdpa, q, k2, v2)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **FP32)


def control(ctx):
    """The same call without either keyword runs on every release."""
    q, k, v = _qkv(ctx)
    out = ctx.call(_sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **FP32)
