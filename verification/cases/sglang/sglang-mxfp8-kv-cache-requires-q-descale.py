"""SGLang's FA4 backend on an MXFP8 KV cache needs per-token Q scales (q_descale) from the model's attention layer."""

from verification.cases.sglang._server import decode_standins, fa4_mxfp8_scales_reach_the_kernel, no_scales_without_mxfp8

BACKEND = "sglang-server"
# the FA backend itself is imported by the helpers, with sgl_kernel stood in where it does not load
REQUIRES = {"packages": ["sglang.srt.server_args"]}


def reproduce(ctx):
    # --attention-backend fa4 with --kv-cache-dtype mxfp8, and a layer that passes no q_descale
    # (every model but Inkling): forward_decode stops before the kernel.
    backend, q, layer, batch = decode_standins(ctx, fa_impl_ver=4, kv_cache_is_mxfp8=True)
    ctx.expect_error(backend.forward_decode, q, None, None, layer, batch)


def fix_1(ctx):
    # --kv-cache-dtype auto.
    no_scales_without_mxfp8(ctx, fa_impl_ver=4)


def fix_2(ctx):
    # The layer passes its UE8M0 Q scales as q_descale.
    fa4_mxfp8_scales_reach_the_kernel(ctx)
