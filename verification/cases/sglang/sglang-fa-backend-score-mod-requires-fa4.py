"""SGLang's FlashAttention backend refuses a score_mod when the instance is FA3 (fa_impl_ver 3)."""

from errkb.verify.case import Refuted
from verification.cases.sglang._server import FA_BACKEND, decode_standins, reaches

BACKEND = "sglang-server"
# the FA backend itself is imported by the helpers, with sgl_kernel stood in where it does not load
REQUIRES = {"packages": ["sglang.srt.server_args"]}


def score_mod(*args):  # a stand-in callback: the backend only checks that one was passed
    raise AssertionError("not called")


def reproduce(ctx):
    # Both forward_extend and forward_decode check first thing; nothing else is read.
    backend, q, layer, batch = decode_standins(ctx, fa_impl_ver=3)
    ctx.expect_error(backend.forward_extend, q, None, None, layer, batch, score_mod=score_mod)
    ctx.expect_error(backend.forward_decode, q, None, None, layer, batch, score_mod=score_mod)


def control(ctx):
    # An FA4 instance lets the score_mod through. To see that the call got past the check, a
    # rel_bias is passed too: its handling, later in forward_decode, leaves a cache dict on the
    # metadata. The call then stops where it needs the real batch (kept as a note).
    backend, q, layer, batch = decode_standins(ctx, fa_impl_ver=4)
    reaches(ctx, FA_BACKEND, backend.forward_decode, q, None, None, layer, batch,
            score_mod=score_mod, rel_bias=ctx.torch.zeros(1, 4, 1))
    if backend.forward_metadata.rel_bias_prep_cache != {}:
        raise Refuted("forward_decode did not get past the score_mod check")
