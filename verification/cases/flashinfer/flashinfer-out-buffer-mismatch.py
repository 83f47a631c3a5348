"""Decode run() refuses an out buffer allocated for a padded batch; a view of q's rows works.

Every step shares the decode module. fix_2 (plan o_data_type for an FP8 query) is not written: it
needs its own FP8-query module (FA3 on SM90; the FA2 e4m3-query decode exists only on SM120).
"""

from verification.cases.flashinfer._fi import D, HQ, KV_LENS, TOL, decode_wrapper, paged, plan_decode, randn, ref

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900
B = len(KV_LENS)
GRAPH_BATCH = 8


def _static_out(ctx):
    return ctx.torch.empty(GRAPH_BATCH, HQ, D, dtype=ctx.torch.float16, device=ctx.device)


def reproduce(ctx):
    kv = paged(ctx)
    w = decode_wrapper(ctx)
    plan_decode(w, kv)
    ctx.expect_error(w.run, randn(ctx, B, HQ, D), kv.cache, out=_static_out(ctx))


def fix_1(ctx):
    kv = paged(ctx)
    w = decode_wrapper(ctx)
    plan_decode(w, kv)
    q, static_out = randn(ctx, B, HQ, D), _static_out(ctx)
    out = ctx.call(w.run, q, kv.cache, out=static_out[: q.shape[0]])
    ctx.close(out, ref(q, [1] * B, kv), **TOL)
    if out.data_ptr() != static_out.data_ptr():
        ctx.note("run() returned a different tensor than the out view it was given")


def control(ctx):
    kv = paged(ctx)
    w = decode_wrapper(ctx)
    plan_decode(w, kv)
    q = randn(ctx, B, HQ, D)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, [1] * B, kv), **TOL)
