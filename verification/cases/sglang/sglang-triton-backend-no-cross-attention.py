"""SGLang's registry refuses the triton attention backend for an encoder-decoder (cross-attention) model."""

from verification.cases.sglang._server import create, published, reaches, runner

BACKEND = "sglang-server"
REQUIRES = {"packages": ["sglang.srt.layers.attention.attention_registry", "sglang.srt.server_args"]}


def reproduce(ctx):
    ctx.expect_error(create, "triton", runner(encoder_decoder=True))


def fix_1(ctx):
    # --attention-backend flashinfer: its creator has no encoder-decoder check (it reads the
    # speculative algorithm, hence the published config) and builds FlashInferAttnBackend.
    with published():
        reaches(ctx, "sglang.srt.layers.attention.flashinfer_backend",
                create, "flashinfer", runner(encoder_decoder=True))


def control(ctx):
    # A decoder-only model passes the check and the creator builds TritonAttnBackend.
    reaches(ctx, "sglang.srt.layers.attention.triton_backend", create, "triton", runner(encoder_decoder=False))
