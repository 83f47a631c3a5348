"""scaled_dot_product_attention's argument parser refuses anything but a Tensor for q/k/v (and
wrong types for the other arguments) before any attention code runs.

The check is PyTorch's Python binding, the same for every device: the steps use the GPU where
there is one, else the CPU (their notes say which). Fix 1 (print what reaches SDPA) is a way to
find the producer, not a call to check. Fix 3 is run with a NumPy array standing for "another
framework's tensor": NumPy exports DLPack; whether a given framework (OneFlow, ...) does is not
checked here, as the record says."""

from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import gpu_if_any, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"packages": ["torch"]}
STEP_REQUIRES = {"fix_3": {"packages": ["numpy"]}}
FP32 = {"atol": 1e-3, "rtol": 1e-3}  # float32 SDPA (any backend) against the float32 reference


def _per_sample(ctx):
    """Three per-sample (heads, seqlen, dim) lists, as unsplit per-image chunks are."""
    q, k, v = qkv(ctx, b=3, sq=32, sk=32, d=32, dtype=ctx.torch.float32)
    return list(q.unbind(0)), list(k.unbind(0)), list(v.unbind(0))


def reproduce(ctx):
    gpu_if_any(ctx)
    qs, ks, vs = _per_sample(ctx)
    # the keyword form first (reported without "(position N)"), then the record's message
    exc = ctx.expect_error(sdpa, qs[0], ks[0], vs[0], scale="0.125")
    ctx.note(f"keyword form: {exc}")
    ctx.expect_error(sdpa, qs, ks, vs)


def fix_2(ctx):
    t = ctx.torch
    gpu_if_any(ctx)
    qs, ks, vs = _per_sample(ctx)
    q, k, v = t.stack(qs), t.stack(ks), t.stack(vs)
    out = ctx.call(sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **FP32)


def fix_3(ctx):
    """NumPy arrays (CPU memory) are refused by SDPA (noted); torch.from_dlpack turns them into
    tensors without a copy, and those run."""
    import numpy as np

    from errkb.verify.case import attempt

    t = ctx.torch
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, 4, 32, 32), dtype=np.float32) for _ in range(3)]
    _, exc = attempt(sdpa, *arrays)
    ctx.note(f"NumPy arrays as they are: {type(exc).__name__ if exc else 'accepted'}: {exc}")
    q, k, v = (t.from_dlpack(a) for a in arrays)
    out = ctx.call(sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **FP32)
