"""A Triton attention kernel launched with tensors in CPU memory: Triton's launcher asks the CUDA
driver for a device address of each pointer argument and refuses the first it cannot get.

The kernel is a small one-block-per-head attention forward (softmax(q k^T * scale) v, fp16 in,
fp32 softmax), launched for real. The reproduce step passes q, k, v and the output all on the
CPU, as `sageattn(q, k, v)` with tensors never moved to CUDA does (argument 0, the query, is
named); then only v on the CPU, which must name argument 2, the position of v in the kernel's
parameter list. Fix 2 (each rank's GPU as current device) needs two GPUs and skips on one.
Fix 3 is its second half, the one that can run anywhere: PyTorch's SDPA on the same CPU tensors
(turning a pipeline's offloading off needs that pipeline)."""

from errkb.verify.case import Refuted
from verification.cases._common import TOL, ref_attention
from verification.cases.triton._launch_kernels import attn_fwd

BACKEND = "triton"
REQUIRES = {"cuda": True, "packages": ["torch", "triton"]}
STEP_REQUIRES = {"fix_3": {"cuda": False}}  # SDPA on CPU tensors, as the fix says
TIMEOUT = 300
B, H, L, D = 2, 4, 64, 64


def attention(q, k, v):
    """The kernel on (B, H, L, D) contiguous tensors; the output is allocated beside q."""
    import torch

    o = torch.empty_like(q)
    attn_fwd[(q.shape[0] * q.shape[1],)](q, k, v, o, q.shape[-1] ** -0.5, L=q.shape[2], D=q.shape[3])
    return o


def _cpu_qkv(ctx):
    t = ctx.torch
    return tuple(t.randn(B, H, L, D, dtype=t.float16) for _ in range(3))


def reproduce(ctx):
    q, k, v = _cpu_qkv(ctx)
    only_v = ctx.expect_error(attention, q.cuda(), k.cuda(), v)
    if "(at 2)" not in str(only_v):
        raise Refuted(f"with only v (parameter 2) on the CPU the launcher said: {only_v}")
    ctx.note(f"only v on the CPU: {only_v}")
    ctx.expect_error(attention, q, k, v)


def fix_1(ctx):
    q, k, v = _cpu_qkv(ctx)
    device = ctx.torch.device("cuda", ctx.torch.cuda.current_device())  # the model's device
    q, k, v = (x.to(device, non_blocking=True) for x in (q, k, v))
    ctx.note(f"devices: {[str(x.device) for x in (q, k, v)]}")
    out = ctx.call(attention, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)


def fix_2(ctx):
    """Tensors on the second GPU, launched inside a device context for their device."""
    t = ctx.torch
    if t.cuda.device_count() < 2:
        ctx.skip(f"needs two GPUs (this machine has {t.cuda.device_count()})")
    q, k, v = (x.to("cuda:1") for x in _cpu_qkv(ctx))
    with t.cuda.device(q.device):
        out = ctx.call(attention, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)


def fix_3(ctx):
    from verification.cases.pytorch._sdpa import sdpa

    q, k, v = (x.float() for x in _cpu_qkv(ctx))
    out = ctx.call(sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), atol=1e-4, rtol=1e-4)
