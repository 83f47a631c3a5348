"""SGLang's registry refuses the hpc_ops attention backend when a speculative algorithm is set."""

from verification.cases.sglang._server import create, published, reaches, runner

BACKEND = "sglang-server"
REQUIRES = {"packages": ["sglang.srt.layers.attention.attention_registry", "sglang.srt.server_args"]}


def reproduce(ctx):
    # A non-MLA decoder-only model (so the creator's two earlier checks pass), EAGLE3 configured.
    with published(attention_backend="hpc_ops", page_size=64, speculative_algorithm="EAGLE3"):
        ctx.expect_error(create, "hpc_ops", runner())


def fix_2(ctx):
    # Drop the --speculative-* flags: the creator goes on to build HPCOpsAttnBackend.
    with published(attention_backend="hpc_ops", page_size=64):
        reaches(ctx, "sglang.srt.layers.attention.hpc_ops_backend", create, "hpc_ops", runner())
