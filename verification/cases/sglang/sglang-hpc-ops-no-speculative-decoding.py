"""SGLang's registry refuses the hpc_ops attention backend when a speculative algorithm is set."""

from verification.cases.sglang._server import create, published, reaches, runner
from verification.cases.sglang._launch import first, model_dir

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


def entry_sglang_server(ctx):
    # --attention-backend hpc_ops with EAGLE3 speculative decoding (the draft is the same tiny config).
    # The three step/top-k/draft-token flags go together: SGLang's resolution asserts that a top-k
    # without --speculative-num-steps leaves the other two unset too (speculative_hook.py,
    # _handle_eagle_family), a bare AssertionError that the first rehearsal hit.
    first(ctx, ["--attention-backend", "hpc_ops", "--page-size", "64", "--speculative-algorithm", "EAGLE3",
                "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
                "--speculative-draft-model-path", model_dir("llama")], model="llama",
          then=lambda args, runner: create("hpc_ops", runner))
