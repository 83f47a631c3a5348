"""transformers asked for FlashAttention 2 where no flash_attn package is installed: 'the package
flash_attn seems to be not installed.'

Reproduce: transformers 4.57.3 (the release whose wording the template holds; 5.x rewords it, as the
record says), torch 2.14.1 from PyPI, no flash-attn and no kernels package: a two-layer Llama saved
from a config made in code, loaded with `from_pretrained(folder, attn_implementation="flash_attention_2")`
in a child process. Fix 2: the same model loaded with attn_implementation="sdpa" loads, and its
logits match the eager implementation's. Fix 1 needs a flash-attn CUDA build, fix 3 the Hugging Face
Hub, fix 4 transformers 5.x with flash-attn-4 (not run)."""

from verification.cases import _tiny_llama as llama

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
TRANSFORMERS = "transformers==4.57.3"


def reproduce(ctx):
    llama.expect_refusal(ctx, TRANSFORMERS, "flash_attention_2")


def fix_1(ctx):
    ctx.skip("needs a flash-attn CUDA build (hours of compiling here, and no GPU to run it)")


def fix_2(ctx):
    llama.sdpa_matches_eager(ctx, TRANSFORMERS)


def fix_3(ctx):
    ctx.skip("downloads a kernel from the Hugging Face Hub, out of reach from this machine")


def fix_4(ctx):
    ctx.skip("transformers 5.x with flash_attention_4 and flash-attn-4 (CUDA only): not run here")
