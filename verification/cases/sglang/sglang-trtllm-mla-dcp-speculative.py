"""SGLang's registry refuses trtllm_mla as the decode backend when decode context parallelism meets speculative decoding."""

from verification.cases.sglang._server import create, published, reaches, runner
from verification.cases.sglang._launch import first, model_dir

BACKEND = "sglang-server"
REQUIRES = {"packages": ["sglang.srt.layers.attention.attention_registry", "sglang.srt.server_args"]}


def reproduce(ctx):
    # --dcp-size 2 turns decode context parallelism on; an MLA model, as trtllm_mla needs.
    with published(attention_backend="trtllm_mla", dcp_size=2, speculative_algorithm="EAGLE") as args:
        ctx.expect_error(create, "trtllm_mla", runner(mla=True, server_args=args))


def fix_1(ctx):
    # --attention-backend cutedsl_mla: the registry asks cutedsl_mla's creator, which accepts the
    # MLA model and builds CuteDslMLABackend.
    with published(attention_backend="cutedsl_mla", dcp_size=2, speculative_algorithm="EAGLE") as args:
        reaches(ctx, "sglang.srt.layers.attention.cutedsl_mla_backend",
                create, "cutedsl_mla", runner(mla=True, server_args=args))


def fix_2(ctx):
    # Keep trtllm_mla and speculative decoding, without DCP: the creator builds TRTLLMMLABackend.
    with published(attention_backend="trtllm_mla", speculative_algorithm="EAGLE") as args:
        reaches(ctx, "sglang.srt.layers.attention.trtllm_mla_backend",
                create, "trtllm_mla", runner(mla=True, server_args=args))


def entry_sglang_server(ctx):
    # --attention-backend trtllm_mla --dcp-size 2 --speculative-algorithm EAGLE on an MLA model.
    first(ctx, ["--attention-backend", "trtllm_mla", "--tp-size", "2", "--dcp-size", "2",
                "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", model_dir("deepseek-v3")],
          model="deepseek-v3", then=lambda args, runner: create("trtllm_mla", runner))
