"""transformers refuses attn_implementation="flex_attention" for a class that does not declare it:
BERT (an encoder with eager and SDPA paths only), built from a tiny BertConfig in code."""

from verification.cases.transformers._tf import needs, refute

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}

FLEX_FROM = "4.51"  # the record: 4.46.3 rejects the name itself; 4.51.3 accepts it


def tiny_bert():
    from transformers import BertConfig

    return BertConfig(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_hidden_layers=2,
                      vocab_size=128, max_position_embeddings=64)


def tiny_phi3():
    from transformers import Phi3Config

    return Phi3Config(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                      num_hidden_layers=2, vocab_size=128, max_position_embeddings=256, pad_token_id=0)


def bert(**kwargs):
    def run():
        from transformers import AutoModel

        return AutoModel.from_config(tiny_bert(), **kwargs)
    return run


def reproduce(ctx):
    needs(ctx, low=FLEX_FROM, why="earlier releases do not know the name flex_attention")
    from transformers import BertModel

    if BertModel._supports_flex_attn:
        ctx.skip("BertModel declares flex_attention in this release")
    ctx.expect_error(bert(attn_implementation="flex_attention"))


def fix_1(ctx):
    # SDPA for the same model.
    needs(ctx, low=FLEX_FROM, why="the fix replaces a flex_attention request")
    model = ctx.call(bert(attn_implementation="sdpa"))
    impl = model.config._attn_implementation
    if impl != "sdpa":
        refute(ctx, f"BERT loaded with {impl!r}, not sdpa", impl=impl)
    t = ctx.torch
    out = ctx.call(model, t.tensor([[1, 2, 3, 4, 5]]))
    ctx.close([int(t.isfinite(out.last_hidden_state).all())], [1], atol=0, what="finite hidden states")


def fix_2(ctx):
    # An architecture whose modeling file declares _supports_flex_attn passes the same check
    # (the record reads Phi-3 as one in 4.57.3). Loading only: the flag check is the claim.
    needs(ctx, low=FLEX_FROM, why="flex_attention is not a known name before it")
    from transformers import AutoModelForCausalLM, Phi3ForCausalLM

    if not Phi3ForCausalLM._supports_flex_attn:
        refute(ctx, "Phi3ForCausalLM does not declare flex_attention in this release",
               flag=Phi3ForCausalLM._supports_flex_attn)
    model = ctx.call(lambda: AutoModelForCausalLM.from_config(tiny_phi3(), attn_implementation="flex_attention"))
    impl = model.config._attn_implementation
    if impl != "flex_attention":
        refute(ctx, f"Phi-3 loaded with {impl!r}", impl=impl)
