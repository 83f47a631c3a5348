"""SGLang's attention registry refuses trtllm_mla for a model that is not served as MLA."""

from verification.cases.sglang._server import create, published, reaches, runner
from verification.cases.sglang._launch import first

BACKEND = "sglang-server"
REQUIRES = {"packages": ["sglang.srt.layers.attention.attention_registry", "sglang.srt.server_args"]}


def reproduce(ctx):
    ctx.expect_error(create, "trtllm_mla", runner(mla=False))


def fix_1(ctx):
    # --attention-backend trtllm_mha: its creator accepts the MHA/GQA model and builds TRTLLMHAAttnBackend.
    reaches(ctx, "sglang.srt.layers.attention.trtllm_mha_backend", create, "trtllm_mha", runner(mla=False))


def control(ctx):
    # An MLA model passes the check; the creator then reads the phase backends (published
    # config) and goes on to build TRTLLMMLABackend.
    with published(attention_backend="trtllm_mla") as args:
        reaches(ctx, "sglang.srt.layers.attention.trtllm_mla_backend",
                create, "trtllm_mla", runner(mla=True, server_args=args))


def entry_sglang_server(ctx):
    # python -m sglang.launch_server --model-path <Llama-shaped> --attention-backend trtllm_mla:
    # the launcher's argument handling, then the registry's creator as the ModelRunner calls it.
    first(ctx, ["--attention-backend", "trtllm_mla"], model="llama",
          then=lambda args, runner: create("trtllm_mla", runner))
