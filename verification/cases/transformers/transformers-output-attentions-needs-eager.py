"""transformers 4.53+ refuses to turn output_attentions on while a model runs SDPA; eager returns them.

The way audio and visualisation nodes meet it: a model loaded with the default sdpa attention,
then `model.config.output_attentions = True`. The fix loads with attn_implementation="eager" and
output_attentions=True, runs a forward pass, and checks what it returns: one attention map per
layer whose rows are probabilities (each sums to 1)."""

from verification.cases.transformers._tf import from_pretrained, tiny_config

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}


def _sdpa_model_asked_for_attentions():
    model = from_pretrained(attn_implementation="sdpa")()
    model.config.output_attentions = True


def reproduce(ctx):
    ctx.expect_error(_sdpa_model_asked_for_attentions)


def fix_1(ctx):
    t = ctx.torch
    model = ctx.call(from_pretrained(attn_implementation="eager", output_attentions=True))
    out = ctx.call(model, t.tensor([[1, 2, 3, 4, 5]]))
    layers = tiny_config().num_hidden_layers
    ctx.close([len(out.attentions or ())], [layers], atol=0, what="attention maps, one per layer")
    rows = t.stack([a.float().sum(-1) for a in out.attentions])
    ctx.close(rows, t.ones_like(rows), atol=1e-4, what="attention rows (each a softmax)")
