"""attn_implementation= reaching the model's __init__: transformers 4.36.1 hands it on when from_pretrained
also gets config= (LongRoPE's loader), and a release older than the option (4.35.2) always does.

A two-layer Llama saved from a config made in code, loaded on with_torch()'s CPU (verification/cases/
_tiny_llama.py), with attn_implementation="sdpa" (the option's value does not matter to the check).
Reproduce: 4.36.1 with config= raises the record's message; the notes add 4.35.2 without config=.
Fix 1: 4.36.2 loads the same call with SDPA. Fix 2: on 4.36.1, the option on the configuration
instead (AutoConfig.from_pretrained(..., attn_implementation=...)) loads with SDPA. Fix 3
(use_flash_attention_2 on 4.34-4.35) needs a GPU and is not run here."""

from verification.cases import _tiny_llama as llama
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
CONFIG = "__import__('transformers').AutoConfig.from_pretrained(folder{})"
WITH_CONFIG = f'config={CONFIG.format("")}, attn_implementation="sdpa"'


def _loaded_with_sdpa(ctx, res):
    def check():
        _venv.reraise(res.output, ctx.record["template"])
        if "LOADED sdpa" not in res.output:
            raise AssertionError(f"not loaded with sdpa: {llama.outcome(res)}")
    ctx.call(check)


def reproduce(ctx):
    res = llama.load(ctx, "transformers==4.36.1", WITH_CONFIG)
    older = llama.load(ctx, "transformers==4.35.2", 'attn_implementation="sdpa"')
    ctx.note(f"4.35.2 without config=: {llama.outcome(older)}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    _loaded_with_sdpa(ctx, llama.load(ctx, "transformers==4.36.2", WITH_CONFIG))


def fix_2(ctx):
    args = "config=" + CONFIG.format(', attn_implementation="sdpa"')
    _loaded_with_sdpa(ctx, llama.load(ctx, "transformers==4.36.1", args))
