"""The SGLang server's entry point for `entry_sglang_server` steps: what `python -m sglang.launch_server`
(and `sglang.Engine(...)`) does with the user's arguments before any model loads, then the check the
record is about, on the arguments as the server resolved them.

Stage 1 is SGLang's own code, in the launcher's order (srt/entrypoints/engine.py:1153-1165):
`prepare_server_args(argv)` (argparse, as the command line is read), `resolve_once()` (the
resolution pipeline: model config, platform defaults, every compatibility hook) and
`check_server_args()`. The model is a tiny checkpoint *config* written to a temporary folder
(`--load-format dummy`: no weights are read; `--skip-tokenizer-init`: it has no tokenizer), so the
pipeline sees a real architecture (Llama-shaped MHA/GQA, or DeepSeek-V3-shaped MLA).

Stage 2, when the step gives one, is the check the record is about, called as the scheduler's
ModelRunner would call it, with the stage-1 ServerArgs published as the process's config. What
lies between (spawning the scheduler, loading dummy weights, allocating the KV pools) is not run:
it needs SGLang's compiled kernels, which this machine cannot load (`_server.py`), and none of it
is about attention arguments. Each step says in its notes how far it got.

SGLang's resolution pipeline imports sgl_kernel on its way to the model config (the quantization
methods import compiled ops by name at module level); its compiled modules cannot load beside the
H200's torch, so the launch first puts errkb's stand-ins in place (`_server.stand_in_compiled`, as
the claim steps do): importing works, calling any of it ends the step in `error`. The first H200
run, without them, skipped every step on the missing module.

To rehearse on a machine without a GPU, `ERRKB_PRETEND_CUDA=9.0` (errkb.verify.pretend) makes
torch answer as an SM90 GPU would, so SGLang finds "the device itself" as on the H200; such
results are never merged.
"""

from __future__ import annotations

import json
import os
import tempfile

from verification.cases.sglang._server import runner, stand_in_compiled

LOGGERS = ("sglang",)

LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256,
         "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
         "num_hidden_layers": 2, "vocab_size": 1024, "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
         "torch_dtype": "bfloat16"}

# DeepSeek-V3's MLA layout (qk_nope 128, qk_rope 64, v 128, latent 512), one MoE layer after one dense one.
DEEPSEEK_V3 = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 256,
               "intermediate_size": 512, "moe_intermediate_size": 64, "num_hidden_layers": 2,
               "num_attention_heads": 4, "num_key_value_heads": 4, "kv_lora_rank": 512, "q_lora_rank": 128,
               "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 4,
               "num_experts_per_tok": 2, "n_shared_experts": 1, "first_k_dense_replace": 1, "n_group": 1,
               "topk_group": 1, "vocab_size": 1024, "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
               "rope_theta": 10000.0, "rms_norm_eps": 1e-6}

MODELS = {"llama": LLAMA, "deepseek-v3": DEEPSEEK_V3}
MLA_MODELS = {"deepseek-v3"}
_dirs: dict[str, str] = {}


def model_dir(name: str) -> str:
    """A folder holding only the named checkpoint's config.json (written once per process)."""
    if name not in _dirs:
        path = os.path.join(tempfile.mkdtemp(prefix="errkb-sglang-"), name)
        os.makedirs(path)
        with open(os.path.join(path, "config.json"), "w") as f:
            json.dump(MODELS[name], f)
        _dirs[name] = path
    return _dirs[name]


def launch(ctx, argv: list[str], *, model: str = "llama", then=None):
    """A call for ctx.expect_first: the launcher's argument handling of
    `python -m sglang.launch_server --model-path <model> --load-format dummy --skip-tokenizer-init ARGV`,
    then `then(server_args, runner)` with those arguments published (a stand-in ModelRunner that
    says whether the model is served as MLA, as the real one decides from the same config).
    Returns what `then` returns, or the resolved ServerArgs."""
    def run():
        stand_in_compiled(ctx)  # before anything imports sgl_kernel (the model config's quantization does)
        from sglang.srt.runtime_context import get_context, restore_context, snapshot_context
        from sglang.srt.server_args import prepare_server_args

        full = ["--model-path", model_dir(model), "--load-format", "dummy", "--skip-tokenizer-init", *argv]
        ctx.note(f"launch arguments ({model} config): {' '.join(argv)}")
        server_args = prepare_server_args(full)
        server_args.resolve_once()
        server_args.check_server_args()
        ctx.note("stage 1 passed: the launcher accepted the arguments (resolve_once, check_server_args)")
        if then is None:
            return server_args
        saved = snapshot_context()
        try:
            get_context().set_server_args(server_args)
            out = then(server_args, runner(mla=model in MLA_MODELS, server_args=server_args))
            ctx.note("stage 2 passed: the record's check accepted the resolved arguments")
            return out
        finally:
            restore_context(saved)
    return run


def first(ctx, argv: list[str], *, model: str = "llama", then=None):
    """ctx.expect_first over launch(...), keeping SGLang's log lines."""
    return ctx.expect_first(launch(ctx, argv, model=model, then=then), loggers=LOGGERS)
