"""transformers 5.6.0's FlashAttention integration calls `s_aux.to(query.dtype)` on the default None:
"'NoneType' object has no attribute 'to'".

The failing line evaluates an argument before any kernel is looked up, so a CPU shows it: in a
child process with transformers (pip --target) next to torch 2.14.1 (PyPI), the steps call
transformers.integrations.flash_attention.flash_attention_forward, the function every model's
attention layer calls for attn_implementation "flash_attention_2", with a Llama attention layer
built from a config and bfloat16 tensors, no attention sinks.

Reproduce: on 5.6.0 the call raises the record's AttributeError from that line. Fix 1: on 5.6.1 the
same call gets past it (it then needs flash-attn's kernels, which this machine does not have: the
step notes what it stopped on instead). Fix 2 (SDPA) is not this function; skipped."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
CALL = r'''
import torch
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaAttention
from transformers.integrations.flash_attention import flash_attention_forward
cfg = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
layer = LlamaAttention(cfg, layer_idx=0).to(torch.bfloat16)
q = torch.randn(1, 4, 8, 16, dtype=torch.bfloat16)
k, v = (torch.randn(1, 2, 8, 16, dtype=torch.bfloat16) for _ in range(2))
flash_attention_forward(layer, q, k, v, None)
'''


def _call(ctx, release: str) -> _venv.Run:
    res = b.run_with_torch(ctx, CALL, path=[b.target_dir(ctx, release)], extra_env={"HF_HUB_OFFLINE": "1"})
    ctx.note(f"{release}: flash_attention_forward(...) without s_aux: {_venv.last_exception(res.output, 200)}")
    return res


def reproduce(ctx):
    res = _call(ctx, "transformers==5.6.0")
    if "s_aux=s_aux.to(query.dtype)" not in res.output:
        ctx.note("the traceback does not show the s_aux line")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    res = _call(ctx, "transformers==5.6.1")

    def past_the_line():
        if "has no attribute 'to'" in res.output:
            raise AssertionError("5.6.1 still fails on s_aux")
        if "ModuleNotFoundError: No module named 'transformers" in res.output:
            raise RuntimeError(f"transformers did not import: {res.tail(300)}")
    ctx.call(past_the_line)


def fix_2(ctx):
    ctx.skip("attn_implementation='sdpa' does not call this function; nothing of the bug to run")
