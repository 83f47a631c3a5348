"""FA2 has no kernels that combine logit softcapping with attention dropout."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}

# fix_2 (load the model with attn_implementation="eager") is a Hugging Face loading option: it needs
# transformers and a checkpoint, so it has no step.

P = 0.1


def reproduce(ctx):
    ctx.expect_error(fa.fa2().flash_attn_func, *fa.qkv(ctx), dropout_p=P, softcap=50.0, causal=True)


def fix_1(ctx):
    fa.runs_and_matches(ctx, fa.fa2().flash_attn_func, *fa.qkv(ctx), dropout_p=0.0, softcap=50.0, causal=True,
                        ref={"causal": True, "softcap": 50.0})


def control(ctx):
    # dropout without softcap runs; FA2 hands back the softmax with dropped entries negated, which
    # gives the kept mask for the reference (non-causal, 128 x 128, so no padding or masked entries)
    t = ctx.torch
    q, k, v = fa.qkv(ctx)
    out, _, s_dmask = ctx.call(fa.fa2().flash_attn_func, q, k, v, dropout_p=P, return_attn_probs=True)
    keep = s_dmask >= 0
    probs = t.softmax((q.float().transpose(1, 2) @ k.float().transpose(1, 2).transpose(-1, -2)) * 128 ** -0.5, dim=-1)
    ref = ((probs * keep / (1 - P)) @ v.float().transpose(1, 2)).transpose(1, 2)
    ctx.note(f"kept fraction {float(keep.float().mean()):.3f} (dropout_p={P})")
    ctx.close(out, ref, **fa.TOL)
