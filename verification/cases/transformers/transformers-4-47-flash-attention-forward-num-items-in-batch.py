"""transformers 4.47.x's FlashAttention helper has no parameter for the extra keywords the attention
layers hand it, so Trainer's loss keyword num_items_in_batch stops it: "_flash_attention_forward() got
an unexpected keyword argument 'num_items_in_batch'".

Checked on the helper itself (transformers.modeling_flash_attention_utils._flash_attention_forward),
on with_torch()'s torch 2.14.1 on the CPU, called with small tensors and the keyword: the argument
check comes before anything of flash-attn is used, so no GPU is needed. Reproduce: 4.47.0 raises the
record's message. Fix 1: 4.48.0 accepts the keyword; the call then goes on into flash-attn, which is
not installed here, so only that much is claimed. Whether Trainer reaches the helper with the keyword
(LlamaFlashAttention2 passing its **kwargs on) is read from the code, not run."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
CALL = r'''
import torch
from transformers.modeling_flash_attention_utils import _flash_attention_forward
q = k = v = torch.randn(1, 8, 2, 16)
_flash_attention_forward(q, k, v, None, 8, is_causal=True, num_items_in_batch=4)
'''


def _call(ctx, release: str):
    res = b.run_with_torch(ctx, CALL, path=[b.target_dir(ctx, release)])
    ctx.note(f"{release}: _flash_attention_forward(..., num_items_in_batch=4): " + _venv.last_exception(res.output, 200))
    return res


def reproduce(ctx):
    res = _call(ctx, "transformers==4.47.0")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    res = _call(ctx, "transformers==4.48.0")

    def check():
        _venv.reraise(res.output, ctx.record["template"])  # the record's message refutes
        if "num_items_in_batch" in _venv.last_exception(res.output):
            raise AssertionError(f"the keyword is still refused: {res.tail(300)}")
    ctx.call(check)
