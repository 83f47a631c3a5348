"""A model class whose _supports_sdpa is a property forwarding to a submodule (Florence-2's remote
code, LLaVA-style VLM code) fails in PreTrainedModel.__init__ from transformers 4.54: the SDPA check
reads the property on the instance before the subclass has built the submodule.

The class here is written in the shape the record describes (a PreTrainedModel whose property
returns self.language_model._supports_sdpa and whose __init__ builds language_model after
super().__init__), around a tiny Llama; loading goes through from_pretrained of a saved folder."""

from verification.cases.transformers._tf import needs, refute, saved_model, tiny_config

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}

FROM = "4.54"


def vlm_class(tolerant: bool):
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedModel

    class ForwardingPreTrainedModel(PreTrainedModel):
        config_class = LlamaConfig
        base_model_prefix = "language_model"

        if tolerant:  # the record's fix 1: a default until the submodule exists
            @property
            def _supports_sdpa(self):
                lm = getattr(self, "language_model", None)
                return True if lm is None else lm._supports_sdpa
        else:
            @property
            def _supports_sdpa(self):
                return self.language_model._supports_sdpa

    class TinyVLM(ForwardingPreTrainedModel):
        def __init__(self, config):
            super().__init__(config)
            self.language_model = LlamaForCausalLM(config)
            self.post_init()

        def forward(self, input_ids):
            return self.language_model(input_ids)

    return TinyVLM


def load(tolerant=False, **kwargs):
    def run():
        return vlm_class(tolerant).from_pretrained(saved_model(), **kwargs)
    return run


def _impl(model):
    return model.config._attn_implementation


def reproduce(ctx):
    needs(ctx, low=FROM, why="earlier releases read the flag on the class, where a property object is truthy")
    saved_model()
    ctx.expect_error(load())


def fix_1(ctx):
    saved_model()
    model = ctx.call(load(tolerant=True))
    ctx.note(f"attention chosen: {_impl(model)!r}")
    out = ctx.call(model, ctx.torch.tensor([[1, 2, 3, 4, 5]]))
    ctx.close([int(ctx.torch.isfinite(out.logits).all())], [1], atol=0, what="finite logits")


def fix_2(ctx):
    needs(ctx, low=FROM, why="the fix is for the releases that fail")
    saved_model()
    model = ctx.call(load(attn_implementation="eager"))
    if _impl(model) != "eager":
        refute(ctx, f"loaded with {_impl(model)!r}, not eager", impl=_impl(model))


def fix_3(ctx):
    # Pinning transformers below 4.54: the untouched property class loads there.
    needs(ctx, below=FROM, why="the fix is a release before 4.54")
    saved_model()
    model = ctx.call(load())
    ctx.note(f"attention chosen: {_impl(model)!r}")
    out = ctx.call(model, ctx.torch.tensor([[1, 2, 3, 4, 5]]))
    ctx.close([int(ctx.torch.isfinite(out.logits).all())], [1], atol=0, what="finite logits")
