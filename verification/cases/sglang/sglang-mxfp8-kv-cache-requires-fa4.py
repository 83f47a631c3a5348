"""SGLang's FlashAttention backend refuses to run attention on an MXFP8 KV cache when the instance is FA3."""

from verification.cases.sglang._server import decode_standins, fa4_mxfp8_scales_reach_the_kernel, no_scales_without_mxfp8
from verification.cases.sglang._launch import first

BACKEND = "sglang-server"
# the FA backend itself is imported by the helpers, with sgl_kernel stood in where it does not load
REQUIRES = {"packages": ["sglang.srt.server_args"]}


def reproduce(ctx):
    # An fa3 instance (e.g. a draft backend created as fa3) on an --kv-cache-dtype mxfp8 pool,
    # even with the layer's Q scales supplied.
    backend, q, layer, batch = decode_standins(ctx, fa_impl_ver=3, kv_cache_is_mxfp8=True)
    ctx.expect_error(backend.forward_decode, q, None, None, layer, batch, q_descale=ctx.torch.ones(1, 4, 4))


def fix_1(ctx):
    # Every instance fa4.
    fa4_mxfp8_scales_reach_the_kernel(ctx)


def fix_2(ctx):
    # --kv-cache-dtype auto: the FA3 instance has nothing to refuse.
    no_scales_without_mxfp8(ctx, fa_impl_ver=3)


def entry_sglang_server(ctx):
    # --kv-cache-dtype mxfp8 with --attention-backend fa3 (the FA backend's fa3 instance is what
    # the record refuses); the launcher's own checks of the pair come first.
    first(ctx, ["--kv-cache-dtype", "mxfp8", "--attention-backend", "fa3"], model="llama")
