"""FA2 prefill has no valid tile for head_dim 32 (NUM_MMA_D_VO=2 < 4): the launcher reports an invalid configuration.

reproduce compiles its own single-prefill module for head_dim 32 (every tile of it is pruned at
compile time, so it is small). fix_2 zero-pads the heads to 128 rather than 64 so that it runs on
the shared prefill module; the softmax scale stays 1/sqrt(32). fix_1 (RoPE outside the kernel with
an FP8 KV cache) targets the ROPE_LLAMA + FP8 trigger and would need FP8 modules: not written.
"""

from verification.cases.flashinfer._fi import (D, HK, HQ, Q_LENS, TOL, fi, indptr, paged, plan_prefill,
                                               prefill_wrapper, randn, ref)

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer"]}
TIMEOUT = 900
SMALL = 32


def reproduce(ctx):
    q, k, v = randn(ctx, 12, HQ, SMALL), randn(ctx, 40, HK, SMALL), randn(ctx, 40, HK, SMALL)
    ctx.expect_error(fi().single_prefill_with_kv_cache, q, k, v, causal=True, backend="fa2")


def fix_2(ctx):
    F = ctx.torch.nn.functional
    kv = paged(ctx, d=SMALL)
    q = randn(ctx, sum(Q_LENS), HQ, SMALL)
    padded = tuple(F.pad(c, (0, D - SMALL)) for c in kv.cache)  # zero columns add nothing to q.k or to o
    w = prefill_wrapper(ctx)
    ctx.call(plan_prefill, w, indptr(ctx, Q_LENS), kv, sm_scale=SMALL ** -0.5)
    out = ctx.call(w.run, F.pad(q, (0, D - SMALL)), padded)[..., :SMALL]
    ctx.close(out, ref(q, Q_LENS, kv, causal=True), **TOL)
