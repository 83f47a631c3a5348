"""LLaMA-Factory 0.5-0.6 (the llmtuner package) run with flash_attn: true where flash-attn is not
installed: it logs 'FlashAttention2 is not installed.' and leaves the attention to transformers.

Environment made by uv 0.9.0 (CPython 3.11, this GPU-less machine): llmtuner 0.6.3 (the last release
with this wording) with the transformers release its requirements start at (4.37.2), PyPI's torch 2.2.2,
and every other dependency as uv resolves it with --exclude-newer 2024-05-01 (what a user installing it
then got); flash-attn is not installed, nothing is stood in. The child goes through llmtuner's own
inference loading path (get_infer_args, load_tokenizer, load_model) on a two-layer Llama and word-level
tokenizer saved from code, with the option as a user passes it, and taps the `llmtuner` and
`transformers` loggers.

Reproduce: flash_attn=True logs the record's message at WARNING on llmtuner's logger; the load goes on
and the model runs a forward pass with the implementation transformers picks by itself. Fix 1 (install
flash-attn 2.x) needs a CUDA build and a GPU: skipped. Fix 2: flash_attn=False loads the model with the
eager implementation (0.6.3 asks for it) and logs nothing of the kind."""

from verification.cases import _builds as b
from verification.cases import _tiny_llama as llama

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
REQUIREMENTS = ("--exclude-newer", "2024-05-01", "llmtuner==0.6.3", "transformers==4.37.2", "torch==2.2.2")


def _env(ctx):
    tool, env = b.uv_env(ctx, "llmtuner-0.6.3", *REQUIREMENTS)
    return env


def reproduce(ctx):
    llama.factory_warns(ctx, _env(ctx), "llmtuner", {"flash_attn": True})


def fix_1(ctx):
    ctx.skip("installing flash-attn 2.x needs a CUDA build (hours of compiling here) and a GPU to use it")


def fix_2(ctx):
    res = llama.factory_load(ctx, _env(ctx), "llmtuner", {"flash_attn": False})
    ctx.not_logged("llmtuner", llama.relog, res.output)
    ctx.call(llama.factory_loaded, res, "eager")
