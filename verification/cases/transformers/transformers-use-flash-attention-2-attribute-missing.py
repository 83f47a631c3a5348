"""Code written against transformers 4.36-4.37 that reads LlamaModel._use_flash_attention_2 (Q-Align's
patched forward does) fails on later releases, which no longer set it: "'LlamaModel' object has no
attribute '_use_flash_attention_2'".

The tiny Llama of _tiny_llama, on with_torch()'s torch 2.14.1 on the CPU, loaded with SDPA, then the
attribute read the way such code reads it. Reproduce: 4.38.2 raises the record's message. Fix 1:
4.36.1 (Q-Align's pin) has the attribute. Fix 2: the configuration's _attn_implementation, which the
fix reads instead, names the implementation on 4.38.2."""

from verification.cases import _tiny_llama as llama
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
READ_FLAG = "print('FLAG', m.model._use_flash_attention_2, flush=True)\n"
READ_CONFIG = "print('CONFIG', m.model.config._attn_implementation, flush=True)\n"


def _printed(ctx, res, prefix: str):
    ctx.call(_venv.finished, res, prefix, f"reading {prefix.lower()}")


def reproduce(ctx):
    res = llama.load(ctx, "transformers==4.38.2", 'attn_implementation="sdpa"', after=READ_FLAG)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    _printed(ctx, llama.load(ctx, "transformers==4.36.1", 'attn_implementation="sdpa"', after=READ_FLAG), "FLAG False")


def fix_2(ctx):
    _printed(ctx, llama.load(ctx, "transformers==4.38.2", 'attn_implementation="sdpa"', after=READ_CONFIG), "CONFIG sdpa")
