"""SGLang's registry refuses cutedsl_mla (and its old name tokenspeed_mla) for a model not served as MLA."""

from errkb.verify.case import Refuted
from verification.cases.sglang._server import create, reaches, runner
from verification.cases.sglang._launch import first

BACKEND = "sglang-server"
REQUIRES = {"packages": ["sglang.srt.layers.attention.attention_registry", "sglang.srt.arg_groups.serving_hook"]}


def reproduce(ctx):
    from sglang.srt.arg_groups.overrides import resolution_result
    from sglang.srt.arg_groups.serving_hook import handle_deprecated_args
    from sglang.srt.server_args import ServerArgs

    ctx.expect_error(create, "cutedsl_mla", runner(mla=False))
    # The old name: argument resolution's deprecation hook renames it before the registry is asked.
    args = ServerArgs(model_path="dummy", attention_backend="tokenspeed_mla")
    handle_deprecated_args(args)
    name = resolution_result(args, "attention_backend")
    if name != "cutedsl_mla":
        raise Refuted(f"--attention-backend tokenspeed_mla resolves to {name!r}, not cutedsl_mla")
    ctx.expect_error(create, name, runner(mla=False))


def fix_1(ctx):
    # --attention-backend trtllm_mha for the MHA/GQA model: its creator accepts it.
    reaches(ctx, "sglang.srt.layers.attention.trtllm_mha_backend", create, "trtllm_mha", runner(mla=False))


def control(ctx):
    # An MLA model passes the check and the creator goes on to build CuteDslMLABackend.
    reaches(ctx, "sglang.srt.layers.attention.cutedsl_mla_backend", create, "cutedsl_mla", runner(mla=True))


def entry_sglang_server(ctx):
    # python -m sglang.launch_server --model-path <Llama-shaped> --attention-backend cutedsl_mla
    first(ctx, ["--attention-backend", "cutedsl_mla"], model="llama",
          then=lambda args, runner: create("cutedsl_mla", runner))
