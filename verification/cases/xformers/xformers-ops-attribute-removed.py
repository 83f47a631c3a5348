"""Code that names an operator class later xFormers releases removed: "module 'xformers.ops' has
no attribute 'MemoryEfficientAttentionTritonFwdFlashBwOp'" (the Triton fMHA ops went in 0.0.25).

Attribute lookups on the real wheel, no GPU needed: the reproduce step on a release from 0.0.25
on (0.0.28.post3 with torch 2.5.1), fix 3 (pin 0.0.24) on 0.0.24 with torch 2.2.0. Fix 1's
attention call needs a GPU, so its step checks what the fix says of the module: the three op
pairs it names are exported. Fix 2 (import the mask classes from attn_bias) runs as written."""

from verification.cases.xformers._xf import needs

BACKEND = "xformers"
REQUIRES = {"packages": ["torch", "xformers.ops"]}
TIMEOUT = 180
REMOVED = "MemoryEfficientAttentionTritonFwdFlashBwOp"
KEPT = ("MemoryEfficientAttentionCutlassOp", "MemoryEfficientAttentionFlashAttentionOp",
        "MemoryEfficientAttentionCutlassFwdFlashBwOp")


def reproduce(ctx):
    needs(ctx, low="0.0.25", why="the Triton fMHA ops were removed in 0.0.25")
    import xformers.ops as xops

    ctx.expect_error(lambda: getattr(xops, REMOVED))


def fix_1(ctx):
    import xformers.ops as xops

    got = ctx.call(lambda: [getattr(xops, name) for name in KEPT])
    ctx.note("exported: " + ", ".join(f"{n}={g!r}"[:120] for n, g in zip(KEPT, got)))
    ctx.note("the op=None / CUTLASS attention call itself needs a GPU and is not run")


def fix_2(ctx):
    import xformers.ops.fmha as fmha
    from xformers.ops.fmha import attn_bias

    if not hasattr(attn_bias, "BlockDiagonalPaddedKeysMask") and not hasattr(fmha, "BlockDiagonalPaddedKeysMask"):
        ctx.skip("this release has no BlockDiagonalPaddedKeysMask at all (the fix is about releases that have it)")

    def import_from_attn_bias():
        from xformers.ops.fmha.attn_bias import BlockDiagonalPaddedKeysMask

        return BlockDiagonalPaddedKeysMask

    ctx.note(f"imported {ctx.call(import_from_attn_bias)!r}")
    try:
        from xformers.ops.fmha import BlockDiagonalPaddedKeysMask  # noqa: F401 - the 'before' line

        ctx.note("the fix's 'before' import from xformers.ops.fmha also works in this release")
    except ImportError as exc:
        ctx.note(f"the fix's 'before' import fails here: {exc}")


def fix_3(ctx):
    needs(ctx, below="0.0.25", why="the fix pins the last release with the Triton ops")
    import xformers.ops as xops

    ctx.note(f"xformers.ops.{REMOVED} = {ctx.call(lambda: getattr(xops, REMOVED))!r}")
