"""FlashAttention refuses GPUs below compute capability 8.0 (Volta, Turing)."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
# the claim is about pre-Ampere GPUs: on the H200 only the SDPA replacement and the control run
REQUIRES = {"cuda": True, "arch": "sm70-sm75", "packages": ["flash_attn", "flash_attn_2_cuda"]}
STEP_REQUIRES = {"fix_2": {"cuda": True, "arch": "sm70+"}, "control": {"cuda": True, "arch": "sm80+"}}

# fix_1 (attn_implementation="sdpa" in from_pretrained) needs transformers and a checkpoint, and
# fix_3 (upgrade flash-attn) is a package install: neither has a step.


def reproduce(ctx):
    q, k, v = fa.qkv(ctx, dtype=ctx.torch.float16)
    ctx.expect_error(fa.fa2().flash_attn_func, q, k, v, causal=True)


def _sdpa(q, k, v):
    """The record's fix_2: SDPA on (batch, heads, seq, dim) views, back to FlashAttention's layout."""
    import torch

    return torch.nn.functional.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True).transpose(1, 2)


def fix_2(ctx):
    # fp16, which pre-Ampere GPUs compute in
    fa.runs_and_matches(ctx, _sdpa, *fa.qkv(ctx, dtype=ctx.torch.float16), ref={"causal": True})


def control(ctx):
    fa.runs_and_matches(ctx, fa.fa2().flash_attn_func, *fa.qkv(ctx, dtype=ctx.torch.float16), causal=True,
                        ref={"causal": True})
