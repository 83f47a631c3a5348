"""transformers asked for FlashAttention 3 where no flash_attn_3 package is installed: 'the package
flash_attn_3 seems to be not installed.'

Reproduce: transformers 4.57.3 (the release of the record's 4.57.3 condition), torch 2.14.1 from PyPI, no
flash_attn_3 and no kernels package: a two-layer Llama saved from a config made in code, loaded with
`from_pretrained(folder, attn_implementation="flash_attention_3")` in a child process (the same model
as transformers-flash-attn-not-installed). Fix 3: the same model with attn_implementation="sdpa" loads
and its logits match the eager implementation's. Fix 1 compiles hopper/ for sm90; fix 2 downloads a
kernel from the Hugging Face Hub (not reachable here)."""

from verification.cases import _tiny_llama as llama

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
TRANSFORMERS = "transformers==4.57.3"


def reproduce(ctx):
    llama.expect_refusal(ctx, TRANSFORMERS, "flash_attention_3")


def fix_1(ctx):
    ctx.skip("compiles FlashAttention-3's hopper/ extension (CUDA, sm90): not on this machine")


def fix_2(ctx):
    ctx.skip("downloads a kernel from the Hugging Face Hub, out of reach from this machine")


def fix_3(ctx):
    llama.sdpa_matches_eager(ctx, TRANSFORMERS)
