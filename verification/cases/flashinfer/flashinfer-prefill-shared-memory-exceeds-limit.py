"""FA2 prefill with head_dim 512 does not fit ~99 KiB-per-block GPUs; A100/H100/H200-class GPUs run it.

reproduce needs a consumer/workstation GPU (SM86/SM89/SM120/SM121), so it is skipped on the H200.
Both steps compile their own FA2 prefill module for head_dim 512 (shared with
flashinfer-batch-attention-head-dim-over-256:fix-1). fix_1 (switch engine backend) is advice.
"""

from verification.cases.flashinfer._fi import HK, HQ, PAGE, TOL, indptr, paged, prefill_wrapper, randn, ref

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
STEP_REQUIRES = {"reproduce": {"arch": ["sm86", "sm89", "sm120", "sm121"]},
                 "fix_2": {"arch": ["sm80", "sm90", "sm100", "sm103"]}}
TIMEOUT = 900
BIG = 512
Q_LENS = (1, 1)  # decode-sized rows: the smallest query tile, the largest KV tile


def _plan(ctx, w, kv):
    w.plan(indptr(ctx, Q_LENS), kv.indptr, kv.indices, kv.last, HQ, HK, BIG, PAGE, causal=True,
           q_data_type=ctx.torch.float16)


def reproduce(ctx):
    kv = paged(ctx, d=BIG)
    w = prefill_wrapper(ctx)
    _plan(ctx, w, kv)
    ctx.expect_error(w.run, randn(ctx, sum(Q_LENS), HQ, BIG), kv.cache)


def fix_2(ctx):
    kv = paged(ctx, d=BIG)
    w = prefill_wrapper(ctx)
    ctx.call(_plan, ctx, w, kv)
    q = randn(ctx, sum(Q_LENS), HQ, BIG)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, Q_LENS, kv, causal=True), **TOL)
