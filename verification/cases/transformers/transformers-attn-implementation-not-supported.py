"""transformers refuses an attn_implementation name it does not know (here a misspelling of flash_attention_2)."""

from verification.cases.transformers._tf import entry, from_config

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}


def reproduce(ctx):
    ctx.expect_error(from_config(attn_implementation="flash_attn_2"))


def fix_1(ctx):
    # The name spelled as transformers spells it; eager needs nothing installed.
    ctx.call(from_config(attn_implementation="eager"))
    ctx.call(from_config(attn_implementation="sdpa"))


def entry_transformers_model(ctx):
    # AutoModelForCausalLM.from_pretrained(folder, attn_implementation="flash_attn_2")
    entry(ctx, attn_implementation="flash_attn_2")
