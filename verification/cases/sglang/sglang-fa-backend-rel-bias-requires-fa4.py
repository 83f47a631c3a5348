"""SGLang's FlashAttention backend refuses rel_bias (the sheared relative bias) when the instance is FA3."""

from errkb.verify.case import Refuted
from verification.cases.sglang._server import FA_BACKEND, decode_standins, reaches

BACKEND = "sglang-server"
# the FA backend itself is imported by the helpers, with sgl_kernel stood in where it does not load
REQUIRES = {"packages": ["sglang.srt.server_args"]}


def reproduce(ctx):
    # forward_decode of an --attention-backend fa3 instance (fa_impl_ver 3), K/V already cached.
    backend, q, layer, batch = decode_standins(ctx, fa_impl_ver=3)
    rel_bias = ctx.torch.zeros(1, 4, 1)  # (tokens, heads, rel_extent); only its presence is checked
    ctx.expect_error(backend.forward_decode, q, None, None, layer, batch, rel_bias=rel_bias)


def fix_1(ctx):
    # --attention-backend fa4: the same call passes the check and registers a per-batch cache for
    # the sheared-bias schedule on the metadata, then stops where it needs the real batch (note).
    backend, q, layer, batch = decode_standins(ctx, fa_impl_ver=4)
    reaches(ctx, FA_BACKEND, backend.forward_decode, q, None, None, layer, batch, rel_bias=ctx.torch.zeros(1, 4, 1))
    if backend.forward_metadata.rel_bias_prep_cache != {}:
        raise Refuted("forward_decode did not get past the rel_bias check")
