"""The FlashAttention-2 path reads the module flag `_flash_supports_window_size`, bound only when
flash-attn was usable at import: "name '_flash_supports_window_size' is not defined".

On a CPU without flash-attn, transformers 4.48.0 (the flag lives in
modeling_flash_attention_utils.py from 4.43.0 to 4.52.x): a tiny Mistral model (sliding window 4,
built in code) is built with eager attention and then routed to FlashAttention-2 by setting
config._attn_implementation directly, as remote code and the record's Janus example do; that
skips from_pretrained's flash-attn check, and the first forward reads the flag. Before 4.48 the
attention class is fixed when the model is built (and building it with flash_attention_2 runs the
check), so the step needs 4.48-4.52. Fix 1 (route to SDPA) runs and must match eager; fix 2
(make flash-attn usable) needs a GPU and fix 3 (a default in one's own modeling code) is about
code other than transformers': not run."""

from verification.cases.transformers._tf import needs

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}
TIMEOUT = 300


def tiny_mistral(**kwargs):
    from transformers import MistralConfig, MistralForCausalLM

    cfg = MistralConfig(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                        num_hidden_layers=2, vocab_size=128, max_position_embeddings=256, sliding_window=4)
    return MistralForCausalLM._from_config(cfg, **kwargs).eval()


def _routed(ctx, impl):
    ctx.seed(0)
    model = tiny_mistral(attn_implementation="eager")
    model.config._attn_implementation = impl
    return model


def reproduce(ctx):
    needs(ctx, low="4.48.0", below="4.53.0", why="the flag is read at forward time through the attention interface "
          "from 4.48.0, and 4.53.0 binds it to False first")
    from verification.cases.transformers._tf import flash_attn_installed

    if flash_attn_installed():
        ctx.skip("flash_attn is installed here")
    model = _routed(ctx, "flash_attention_2")
    ctx.expect_error(model, ctx.torch.tensor([[1, 2, 3, 4, 5, 6]]))


def fix_1(ctx):
    needs(ctx, low="4.48.0", why="routing by config._attn_implementation at forward time")
    t = ctx.torch
    ids = t.tensor([[1, 2, 3, 4, 5, 6]])
    eager = _routed(ctx, "eager")
    model = _routed(ctx, "sdpa")
    with t.no_grad():
        ctx.close(ctx.call(model, ids).logits, eager(ids).logits, atol=1e-4, rtol=1e-4, what="SDPA logits vs eager")


def fix_2(ctx):
    ctx.skip("a usable flash-attn needs a CUDA GPU")


def fix_3(ctx):
    ctx.skip("a default bound in one's own or vendored modeling code; transformers' own module is not edited here")
