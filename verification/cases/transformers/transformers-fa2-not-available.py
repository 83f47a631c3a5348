"""What a user loading a model with attn_implementation="flash_attention_2" sees first where this record's check is."""

from verification.cases.transformers._tf import entry, from_config

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}
# The record's own check comes after transformers finds the flash_attn package: only a machine
# with it installed can reproduce it.
STEP_REQUIRES = {"reproduce": {"packages": ["flash_attn"]}}


def reproduce(ctx):
    import torch

    ctx.expect_error(from_config(attn_implementation="flash_attention_2", dtype=torch.bfloat16))


def entry_transformers_model(ctx):
    import torch

    entry(ctx, attn_implementation="flash_attention_2", dtype=torch.bfloat16)
