"""LLaMA-Factory 0.7+ asked for FlashAttention 2 (flash_attn: fa2) where flash-attn is not installed:
it logs 'FlashAttention-2 is not installed.' and loads the model with transformers' default.

Environment made by uv 0.9.0 (CPython 3.11, this GPU-less machine): llamafactory 0.9.4 with the
transformers release it allows last (4.57.1), PyPI's torch 2.5.1 with torchvision 0.20.1 and
torchaudio 2.5.1, the rest resolved by uv within 0.9.4's pins; flash-attn is not installed, nothing is
stood in. The child goes through LLaMA-Factory's own inference loading path (get_infer_args, load_tokenizer,
load_model) on a two-layer Llama and word-level tokenizer saved from code, with the option as a user
passes it, and taps the `llamafactory` and `transformers` loggers.

Reproduce: flash_attn="fa2" logs the record's message at WARNING on llamafactory's logger; the load
goes on and the model runs a forward pass with the implementation transformers picks by itself.
Fix 1 (install flash-attn) needs a CUDA build and a GPU: skipped, with what the fix's check command
prints here. Fix 2: flash_attn="sdpa" loads the model with SDPA and logs nothing of the kind."""

from verification.cases import _builds as b
from verification.cases import _tiny_llama as llama

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
REQUIREMENTS = ("llamafactory==0.9.4", "transformers==4.57.1", "torch==2.5.1", "torchvision==0.20.1",
                "torchaudio==2.5.1")
CHECK = ("import torch; from transformers.utils import is_flash_attn_2_available as f; "
         "print(torch.cuda.is_available(), f())")  # fix 1's own check command


def _env(ctx):
    tool, env = b.uv_env(ctx, "llamafactory-0.9.4", *REQUIREMENTS)
    return env


def reproduce(ctx):
    llama.factory_warns(ctx, _env(ctx), "llamafactory", {"flash_attn": "fa2"})


def fix_1(ctx):
    res = _env(ctx).python_run(CHECK)
    ctx.skip(f"installing flash-attn needs a CUDA build and a GPU; the fix's check prints {res.output.strip()[-60:]!r} here")


def fix_2(ctx):
    res = llama.factory_load(ctx, _env(ctx), "llamafactory", {"flash_attn": "sdpa"})
    ctx.not_logged("llamafactory", llama.relog, res.output)
    ctx.call(llama.factory_loaded, res, "sdpa")
