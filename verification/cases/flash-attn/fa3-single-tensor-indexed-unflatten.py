"""Code written for the FA3 that returned (out, softmax_lse) indexes the result with [0]; FA3 from
v2.8.2 (hopper/ at v2.8.3 here) returns `out` alone, so [0] takes the first token's (heads, dim) row
and the reshape that follows fails with "unflatten: Provided sizes ... don't multiply up to the size
of dim 0 ...".

The reshape is Wan 2.1's: packed (batch * seqlen, heads, dim) queries, equal lengths, and
`.unflatten(0, (b, lq))` on the result. Head dim 128, bf16: the reduced FA3 build's kernel."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn_interface", "flash_attn_3"]}
B, LQ = 2, 96


def _packed(ctx):
    q, k, v = fa.packed(ctx, lens=[LQ] * B)
    cu = fa.cu_seqlens(ctx, [LQ] * B)
    return q, k, v, cu


def _varlen(q, k, v, cu):
    return fa.fa3().flash_attn_varlen_func(q, k, v, cu, cu, LQ, LQ)


def _reference(q, k, v, cu):
    return fa.varlen_ref(q, k, v, cu, cu).unflatten(0, (B, LQ))


def reproduce(ctx):
    q, k, v, cu = _packed(ctx)
    ctx.note(f"flash_attn_varlen_func returned {type(_varlen(q, k, v, cu)).__name__}")
    ctx.expect_error(lambda: _varlen(q, k, v, cu)[0].unflatten(0, (B, LQ)))


def fix_1(ctx):
    q, k, v, cu = _packed(ctx)

    def wan_after_fix():
        x = _varlen(q, k, v, cu)
        if isinstance(x, tuple):
            x = x[0]
        return x.unflatten(0, (B, LQ))

    out = fa.build_call(ctx, wan_after_fix)
    ctx.close(out, _reference(q, k, v, cu), **fa.TOL)


def fix_2(ctx):
    ctx.skip("uninstalling flash_attn_3 makes Wan fall back to FA2 (a package change, not a call)")


def control(ctx):
    q, k, v, cu = _packed(ctx)
    out = fa.build_call(ctx, lambda: _varlen(q, k, v, cu).unflatten(0, (B, LQ)))
    ctx.close(out, _reference(q, k, v, cu), **fa.TOL)
