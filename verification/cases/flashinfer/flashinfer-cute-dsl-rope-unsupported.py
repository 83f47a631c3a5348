"""The cute-dsl paged prefill plan rejects pos_encoding_mode='ROPE_LLAMA'; rotate q/k first and plan NONE.

The refusal is a Python check in plan() that runs before any kernel is built, so it is observable on
any GPU where the CuTe DSL package imports; running the cute-dsl kernel (fix, control) needs SM100.
"""

from verification.cases.flashinfer._fi import (D, HQ, PAGE, Q_LENS, TOL, indptr, paged, plan_prefill,
                                               prefill_wrapper, randn, ref)

REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flashinfer", "cutlass.cute"]}
STEP_REQUIRES = {"fix_1": {"arch": ["sm100", "sm103"]}, "control": {"arch": ["sm100", "sm103"]}}
TIMEOUT = 900


def reproduce(ctx):
    kv = paged(ctx)
    w = prefill_wrapper(ctx, backend="cute-dsl")
    ctx.expect_error(plan_prefill, w, indptr(ctx, Q_LENS), kv, pos_encoding_mode="ROPE_LLAMA")


def _rotate(ctx, kv, q):
    """RoPE applied outside the kernel: keys by their position, queries by theirs (the last rows)."""
    import flashinfer

    t = ctx.torch
    start = 0
    for i, (n, p, qn) in enumerate(zip(kv.lens.tolist(), kv.pages, Q_LENS)):
        pos = t.arange(n, dtype=t.int32, device=ctx.device)
        q_rows = slice(sum(Q_LENS[:i]), sum(Q_LENS[:i]) + qn)
        # rotate this request's keys together with its queries (positions n - qn .. n - 1)
        q_rot, _ = flashinfer.apply_rope_pos_ids(q[q_rows], kv.ks[i][-qn:], pos[-qn:])
        _, k_rot = flashinfer.apply_rope_pos_ids(kv.ks[i], kv.ks[i], pos)
        q[q_rows] = q_rot
        kv.ks[i] = k_rot
        # write the rotated keys back into their pages, as the model would append them
        pages = kv.indices[start:start + p].long().repeat_interleave(PAGE)[:n]
        kv.k[pages, t.arange(n, device=ctx.device) % PAGE] = k_rot
        start += p
    return q


def fix_1(ctx):
    kv = paged(ctx)
    q = _rotate(ctx, kv, randn(ctx, sum(Q_LENS), HQ, D))
    w = prefill_wrapper(ctx, backend="cute-dsl")
    ctx.call(plan_prefill, w, indptr(ctx, Q_LENS), kv, pos_encoding_mode="NONE")
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, Q_LENS, kv, causal=True), **TOL)


def control(ctx):
    kv = paged(ctx)
    q = randn(ctx, sum(Q_LENS), HQ, D)
    w = prefill_wrapper(ctx, backend="cute-dsl")
    ctx.call(plan_prefill, w, indptr(ctx, Q_LENS), kv)
    out = ctx.call(w.run, q, kv.cache)
    ctx.close(out, ref(q, Q_LENS, kv, causal=True), **TOL)
