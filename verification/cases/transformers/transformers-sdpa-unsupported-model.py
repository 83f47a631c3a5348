"""transformers refuses attn_implementation="sdpa" for a model class whose _supports_sdpa is False.

Two ways to meet it, both built in code (no download): Phi-3 on a release before 4.45 (the record's
pinned example: Phi3's flag is False up to 4.44.2), and on any release a downstream subclass that
turns the flag off (what a remote-code or vendored model class without an SDPA path amounts to)."""

from verification.cases.transformers._tf import needs, refute, tiny_config, version

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}


def tiny_phi3():
    from transformers import Phi3Config

    return Phi3Config(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                      num_hidden_layers=2, vocab_size=128, max_position_embeddings=256, pad_token_id=0)


def no_sdpa_class():
    from transformers import LlamaForCausalLM

    class NoSdpaLlama(LlamaForCausalLM):  # a subclass whose code declares no SDPA path
        _supports_sdpa = False

    return NoSdpaLlama


def _build(ctx, **kwargs):
    """The record's model for this release: Phi-3 before 4.45, else the subclass with the flag off."""
    if version() < (4, 45):
        from transformers import Phi3ForCausalLM

        ctx.note("Phi3ForCausalLM (tiny Phi3Config), whose _supports_sdpa is False before 4.45")
        return lambda: Phi3ForCausalLM._from_config(tiny_phi3(), **kwargs)
    ctx.note("a LlamaForCausalLM subclass with _supports_sdpa = False (Phi-3 declares SDPA from 4.45)")
    cls = no_sdpa_class()
    return lambda: cls._from_config(tiny_config(), **kwargs)


def _impl(model) -> str:
    return getattr(model.config, "_attn_implementation", None)


def reproduce(ctx):
    ctx.expect_error(_build(ctx, attn_implementation="sdpa"))


def fix_1(ctx):
    # Upgrade: from 4.45 Phi-3 declares SDPA, so the same request loads with SDPA.
    needs(ctx, low="4.45", why="the fix is the upgrade to a release where Phi-3 has SDPA")
    from transformers import Phi3ForCausalLM

    model = ctx.call(lambda: Phi3ForCausalLM._from_config(tiny_phi3(), attn_implementation="sdpa"))
    if _impl(model) != "sdpa":
        refute(ctx, f"Phi-3 loaded with {_impl(model)!r}, not sdpa", impl=_impl(model))
    out = ctx.call(model, ctx.torch.tensor([[1, 2, 3, 4, 5]]))
    ctx.close([int(ctx.torch.isfinite(out.logits).all())], [1], atol=0, what="finite logits")


def fix_2(ctx):
    # Eager works for the same class.
    model = ctx.call(_build(ctx, attn_implementation="eager"))
    if _impl(model) != "eager":
        refute(ctx, f"loaded with {_impl(model)!r}, not eager", impl=_impl(model))
    out = ctx.call(model, ctx.torch.tensor([[1, 2, 3, 4, 5]]))
    ctx.close([int(ctx.torch.isfinite(out.logits).all())], [1], atol=0, what="finite logits")


def fix_3(ctx):
    # No attn_implementation: the check is soft and the class quietly gets eager.
    model = ctx.call(_build(ctx))
    ctx.note(f"attention chosen without a request: {_impl(model)!r}")
    if _impl(model) != "eager":
        refute(ctx, f"without a request the model got {_impl(model)!r}, not eager", impl=_impl(model))
