"""A sample-packing patch's decoder layer calls self_attn(..., cu_seqlens=..., max_seqlen=...) on
transformers' SDPA attention class: "MistralSdpaAttention.forward() got an unexpected keyword
argument 'cu_seqlens'".

transformers 4.38.2 (the record's release) and 4.44.2, on the CPU: a tiny Mistral model built with
AutoModelForCausalLM.from_config(config) and no attn_implementation, as the FSDP + QLoRA loader did;
the step checks that SDPA was picked, then calls its first layer's attention the way the packed
decoder layer does. Fix 2 (from_config(..., attn_implementation="eager")) must build the eager
class the patch replaces (MistralAttention), not the SDPA one. Fix 3 (no packing) runs the stock
model, whose logits must match eager. Fix 1 (a newer axolotl) is not run. The SDPA classes are
gone from 4.48.0, so every step needs an earlier release; the TypeError itself only up to 4.41.x:
from 4.42 the SDPA forward takes **kwargs and the call returns (the reproduce step then checks
that it does, and is skipped with what it saw)."""

from verification.cases.transformers._tf import needs, refute, version

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}
TIMEOUT = 300
RELEASES = {"low": "4.37.0", "below": "4.48.0", "why": "MistralSdpaAttention exists from 4.37.0 to 4.47.x"}
KWARGS_FROM = (4, 42)  # MistralSdpaAttention.forward takes **kwargs from 4.42 (read in 4.42.4; 4.41.2 has none)


def tiny_config():
    from transformers import MistralConfig

    return MistralConfig(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                         num_hidden_layers=2, vocab_size=128, max_position_embeddings=256)


def build(**kwargs):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_config(tiny_config(), **kwargs).eval()


def reproduce(ctx):
    needs(ctx, **RELEASES)
    t = ctx.torch
    model = build()
    attn = model.model.layers[0].self_attn
    ctx.note(f"from_config(config) built {type(attn).__name__} (config._attn_implementation="
             f"{model.config._attn_implementation!r})")
    hidden = t.randn(1, 6, 64)
    position_ids = t.arange(6)[None]
    cu_seqlens = t.tensor([0, 2, 6], dtype=t.int32)
    call = lambda: attn(hidden_states=hidden, position_ids=position_ids, cu_seqlens=cu_seqlens, max_seqlen=4)  # noqa: E731
    if version() >= KWARGS_FROM:
        out = call()  # any exception here is an error of the case: the record says this returns
        ctx.skip(f"from 4.42 the SDPA forward takes **kwargs: the call returned {type(out).__name__} without the "
                 "TypeError (cu_seqlens lands in **kwargs, which the SDPA forward never reads)")
    ctx.expect_error(call)


def fix_1(ctx):
    ctx.skip("axolotl is not installed here")


def fix_2(ctx):
    needs(ctx, **RELEASES)
    model = ctx.call(lambda: build(attn_implementation="eager"))
    from transformers.models.mistral.modeling_mistral import MistralAttention

    attn = model.model.layers[0].self_attn
    ctx.note(f"built {type(attn).__name__}")
    if type(attn) is not MistralAttention:
        refute(ctx, f"from_config(..., attn_implementation='eager') built {type(attn).__name__}, not MistralAttention",
               built=type(attn).__name__)


def fix_3(ctx):
    needs(ctx, **RELEASES)
    t = ctx.torch
    ids = t.tensor([[1, 2, 3, 4, 5, 6]])
    ctx.seed(0)
    model = build()
    eager = build(attn_implementation="eager")
    eager.load_state_dict(model.state_dict())
    with t.no_grad():
        ctx.close(ctx.call(model, ids).logits, eager(ids).logits, atol=1e-4, rtol=1e-4, what="stock model logits vs eager")
