"""SGLang's FA4 backend on an MXFP8 KV cache needs per-token Q scales (q_descale) from the model's attention layer."""

from errkb.verify.case import Refuted
from verification.cases.sglang._server import decode_standins, mxfp8_pool

BACKEND = "sglang-server"
REQUIRES = {"packages": ["sglang.srt.layers.attention.flashattention_backend"]}


def reproduce(ctx):
    # --attention-backend fa4 with --kv-cache-dtype mxfp8, and a layer that passes no q_descale
    # (every model but Inkling): forward_decode stops before the kernel.
    backend, q, layer, batch = decode_standins(ctx, fa_impl_ver=4, kv_cache_is_mxfp8=True)
    ctx.expect_error(backend.forward_decode, q, None, None, layer, batch)


def fix_1(ctx):
    # --kv-cache-dtype auto: no block scales are needed, none are asked for.
    backend, _, layer, batch = decode_standins(ctx, fa_impl_ver=4, kv_cache_is_mxfp8=False)
    if ctx.call(backend._mxfp8_sf_kwargs, layer, batch, None) != {}:
        raise Refuted("scale factors requested without an MXFP8 cache")


def fix_2(ctx):
    # The layer passes its UE8M0 Q scales as q_descale: the scale-factor step returns them (as sfq)
    # with the pool's K/V scales. (Checked on that method: the rest of forward_decode needs a real pool.)
    pool, (k_sf, v_sf) = mxfp8_pool(ctx)
    backend, _, layer, batch = decode_standins(ctx, fa_impl_ver=4, kv_cache_is_mxfp8=True, token_to_kv_pool=pool)
    q_scales = ctx.torch.ones(1, 4, 4)
    kwargs = ctx.call(backend._mxfp8_sf_kwargs, layer, batch, q_scales)
    if not (kwargs.get("sfq") is q_scales and kwargs.get("sfk") is k_sf and kwargs.get("sfv") is v_sf):
        raise Refuted(f"unexpected kernel arguments {sorted(kwargs)}")
