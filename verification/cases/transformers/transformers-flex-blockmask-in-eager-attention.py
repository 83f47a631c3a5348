"""A FlexAttention BlockMask handed to eager attention: `Tensor + BlockMask` raises TypeError.

The situation of the record, made with a tiny Llama in code: the model is loaded with
attn_implementation="flex_attention", so transformers' mask builder (masking_utils, from 4.53)
makes a BlockMask, while a patch has swapped the attention function that runs for the eager one
(as Unsloth's inference path did). Both the out-of-place form (transformers' own
eager_attention_forward) and the in-place one (Unsloth's `+=`) are tried."""

import contextlib

from verification.cases.transformers._tf import needs, refute, tiny_config

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch", "torch.nn.attention.flex_attention"]}
STEP_REQUIRES = {"fix_1": {"cuda": True, "packages": ["unsloth", "unsloth_zoo"]}}

MASKS_FROM = "4.53"  # masking_utils builds a BlockMask for flex_attention configs


def model(attn):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_config(tiny_config(), attn_implementation=attn)


def inplace_eager(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """An eager attention that adds the mask in place, like Unsloth's gpt-oss inference forward."""
    import torch
    from transformers.models.llama.modeling_llama import repeat_kv

    key, value = repeat_kv(key, module.num_key_value_groups), repeat_kv(value, module.num_key_value_groups)
    scores = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        scores += attention_mask
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    return torch.matmul(probs, value).transpose(1, 2).contiguous(), probs


@contextlib.contextmanager
def flex_runs_as(fn):
    """Make the "flex_attention" entry of transformers' attention table run `fn` (what a patch that
    swaps the attention function without touching the config does)."""
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    ALL_ATTENTION_FUNCTIONS["flex_attention"] = fn
    try:
        yield
    finally:
        del ALL_ATTENTION_FUNCTIONS["flex_attention"]


def _forward_with(m, fn, ids):
    def run():
        with flex_runs_as(fn):
            return m(ids)
    return run


def reproduce(ctx):
    needs(ctx, low=MASKS_FROM, why="before it the models build dense masks themselves")
    from transformers.models.llama.modeling_llama import eager_attention_forward

    ctx.seed(0)
    m = model("flex_attention")
    ids = ctx.torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8]])
    ctx.note("tiny Llama, config flex_attention, attention run by transformers' eager_attention_forward ('+')")
    ctx.expect_error(_forward_with(m, eager_attention_forward, ids))
    first = dict(ctx.observed)
    ctx.note("the same with an in-place eager attention ('+=')")
    ctx.expect_error(_forward_with(m, inplace_eager, ids))
    ctx.observed = {**ctx.observed, "also": first}


def fix_1(ctx):
    # Unsloth >= 2026.2.1 / unsloth_zoo >= 2026.5.4: needs both and a CUDA GPU (STEP_REQUIRES).
    ctx.skip("not written: needs Unsloth's gpt-oss inference path on a GPU")


def fix_2(ctx):
    # Load with eager: the mask is a dense tensor and the same eager attention runs.
    needs(ctx, low=MASKS_FROM, why="the fix is about the mask builder of masking_utils")
    t = ctx.torch
    ctx.seed(0)
    m = ctx.call(lambda: model("eager"))
    ids = t.tensor([[1, 2, 3, 4, 5, 6, 7, 8]])
    with t.no_grad():
        out = ctx.call(m, ids)
        m.config._attn_implementation = "sdpa"  # same weights, another dense-mask implementation
        ref = m(ids)
    if m.config._attn_implementation != "sdpa":
        refute(ctx, "could not switch the reference to sdpa")
    ctx.close(out.logits, ref.logits, atol=1e-4, what="eager logits vs sdpa logits, same weights")
