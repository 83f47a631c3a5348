"""SGLang's attention registry refuses trtllm_mha for a model served as MLA."""

from verification.cases.sglang._server import create, published, reaches, runner
from verification.cases.sglang._launch import first

BACKEND = "sglang-server"
REQUIRES = {"packages": ["sglang.srt.layers.attention.attention_registry", "sglang.srt.server_args"]}


def reproduce(ctx):
    ctx.expect_error(create, "trtllm_mha", runner(mla=True))


def fix_1(ctx):
    # --attention-backend trtllm_mla: its creator accepts the MLA model and goes on to build
    # TRTLLMMLABackend (it reads the phase backends and the DCP/speculative settings first).
    with published(attention_backend="trtllm_mla") as args:
        reaches(ctx, "sglang.srt.layers.attention.trtllm_mla_backend",
                create, "trtllm_mla", runner(mla=True, server_args=args))


def control(ctx):
    # The same creator with an MHA/GQA model passes its check and builds TRTLLMHAAttnBackend.
    reaches(ctx, "sglang.srt.layers.attention.trtllm_mha_backend", create, "trtllm_mha", runner(mla=False))


def entry_sglang_server(ctx):
    # python -m sglang.launch_server --model-path <DeepSeek-V3-shaped> --attention-backend trtllm_mha
    first(ctx, ["--attention-backend", "trtllm_mha"], model="deepseek-v3",
          then=lambda args, runner: create("trtllm_mha", runner))
