"""transformers 4.51.0's make_flex_block_causal_mask pads a 2-D attention mask with key_length, which
defaults to None: torch's pad() refuses the tuple ("failed to unpack the object at pos 2 ...").

Run on with_torch()'s torch 2.14.1 on the CPU: the helper is called the way the model files of 4.51.0
call it, with the 2-D mask alone. Reproduce: 4.51.0 raises the record's message. Fix 1: 4.51.1 builds
the BlockMask from the same call. Fix 2: on 4.51.0 (with accelerate 1.6.0, which
4.51.0's from_pretrained needs), the tiny Llama of _tiny_llama loads with SDPA and matches eager,
without going through the FlexAttention helper."""

from verification.cases import _builds as b
from verification.cases import _tiny_llama as llama
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
BROKEN, FIXED = "transformers==4.51.0", "transformers==4.51.1"
ACCELERATE = "accelerate==1.6.0"
CALL = r'''
import torch
from transformers.integrations.flex_attention import make_flex_block_causal_mask
mask = torch.ones(2, 16, dtype=torch.long)
mask[1, :4] = 0
block = make_flex_block_causal_mask(mask)
print("BLOCKMASK", type(block).__name__, tuple(block.shape), flush=True)
'''


def _call(ctx, release: str):
    res = b.run_with_torch(ctx, CALL, path=[b.target_dir(ctx, release)])
    ctx.note(f"{release}: make_flex_block_causal_mask(<2-D mask>): "
             + ("built a BlockMask" if "BLOCKMASK BlockMask" in res.output else _venv.last_exception(res.output, 200)))
    return res


def reproduce(ctx):
    res = _call(ctx, BROKEN)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    ctx.call(_venv.finished, _call(ctx, FIXED), "BLOCKMASK BlockMask", "make_flex_block_causal_mask")


def fix_2(ctx):
    # 4.51.0's from_pretrained also needs accelerate (without it: NameError 'init_empty_weights',
    # another 4.51.0 bug fixed in 4.51.1), so it is put on the path too
    accelerate = b.target_dir(ctx, ACCELERATE, no_deps=True)
    llama.sdpa_matches_eager(ctx, BROKEN, path=[accelerate])
