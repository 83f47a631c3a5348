"""Code written for flash-attn < 2.7 unpacks eight values from `_flash_attn_forward`; from 2.7.0
the function returns four (out, softmax_lse, S_dmask, rng_state), so the caller stops with
"not enough values to unpack (expected 8, got 4)" (the record's second trigger; its first, a 2.0.2+
interface over a 2.0.0/2.0.1 binary, needs a build of those releases and is not run here).

flash-attn 2.8.3 (the reduced sm90 build: head dim 128 forward, bf16/fp16). The eight names are
those of the 2.6.3 interface's `_flash_attn_forward` return."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn", "flash_attn_2_cuda"]}


def _forward(ctx):
    q, k, v = fa.qkv(ctx)
    from flash_attn.flash_attn_interface import _flash_attn_forward

    def run():
        return _flash_attn_forward(q, k, v, 0.0, q.shape[-1] ** -0.5, False, -1, -1, 0.0, None, False)

    return (q, k, v), run


def reproduce(ctx):
    _, run = _forward(ctx)

    def caller_for_2_6():
        out, q, k, v, out_padded, softmax_lse, S_dmask, rng_state = run()
        return out

    ctx.expect_error(caller_for_2_6)


def fix_1(ctx):
    ctx.skip("a stale 2.0.0/2.0.1 binary under a newer interface needs builds of those releases")


def fix_2(ctx):
    # matching flash-attn to the caller: the caller pinned to "flash-attn<2.7" unpacks eight; here the
    # installed 2.8.3 is matched by a caller written for it, which unpacks the four it returns
    (q, k, v), run = _forward(ctx)

    def caller_for_2_7_plus():
        out, softmax_lse, S_dmask, rng_state = run()
        return out

    out = fa.build_call(ctx, caller_for_2_7_plus)
    fa.matches(ctx, out, q, k, v)


def control(ctx):
    q, k, v = fa.qkv(ctx)
    fa.runs_and_matches(ctx, fa.fa2().flash_attn_func, q, k, v)
