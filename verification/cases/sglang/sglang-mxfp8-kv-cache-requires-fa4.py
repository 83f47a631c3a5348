"""SGLang's FlashAttention backend refuses to run attention on an MXFP8 KV cache when the instance is FA3."""

from errkb.verify.case import Refuted
from verification.cases.sglang._server import decode_standins, mxfp8_pool

BACKEND = "sglang-server"
REQUIRES = {"packages": ["sglang.srt.layers.attention.flashattention_backend"]}


def reproduce(ctx):
    # An fa3 instance (e.g. a draft backend created as fa3) on an --kv-cache-dtype mxfp8 pool,
    # even with the layer's Q scales supplied.
    backend, q, layer, batch = decode_standins(ctx, fa_impl_ver=3, kv_cache_is_mxfp8=True)
    ctx.expect_error(backend.forward_decode, q, None, None, layer, batch, q_descale=ctx.torch.ones(1, 4, 4))


def fix_1(ctx):
    # Every instance fa4: the scale-factor step hands the kernel the Q, K and V scales. (Checked on
    # the method that builds them: the rest of forward_decode needs a real pool and batch.)
    pool, (k_sf, v_sf) = mxfp8_pool(ctx)
    backend, _, layer, batch = decode_standins(ctx, fa_impl_ver=4, kv_cache_is_mxfp8=True, token_to_kv_pool=pool)
    q_scales = ctx.torch.ones(1, 4, 4)
    kwargs = ctx.call(backend._mxfp8_sf_kwargs, layer, batch, q_scales)
    if not (kwargs.get("sfq") is q_scales and kwargs.get("sfk") is k_sf and kwargs.get("sfv") is v_sf):
        raise Refuted(f"unexpected kernel arguments {sorted(kwargs)}")


def fix_2(ctx):
    # --kv-cache-dtype auto: the FA3 instance has no scale factors to pass and nothing to refuse.
    backend, _, layer, batch = decode_standins(ctx, fa_impl_ver=3, kv_cache_is_mxfp8=False)
    if ctx.call(backend._mxfp8_sf_kwargs, layer, batch, None) != {}:
        raise Refuted("scale factors requested without an MXFP8 cache")
