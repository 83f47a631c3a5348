"""The kernel under vLLM's FlexAttention backend with a head size not divisible by 8: "CUDA error:
misaligned address".

vLLM is not on the lent GPU, so the step calls what its FLEX_ATTENTION backend runs: PyTorch's compiled
flex_attention (torch.compile, dynamic=False) on bf16 q/k/v of head size 46 (the model of vllm issue 41257),
in the (batch, heads, seq, head) layout, then synchronises so an asynchronous CUDA error surfaces in the step.
What is checked is the record's mechanism (the Triton kernels torch generates for flex_attention need 16-byte
aligned rows), not vLLM's backend selection; the notes give torch and Triton's versions.

reproduce (GPU): head size 46 raises the record's error (the worker is replaced afterwards, the CUDA context
being unusable). control (GPU): head size 48 runs and matches an fp32 reference. fix 1 (GPU): a backend that
handles the size, PyTorch SDPA, runs head size 46 and matches the reference. fix 2 (locating another kernel)
is a reading of the log: nothing to run."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import compiled_flex, qkv, sdpa

BACKEND = "flex-attention"
REQUIRES = {"cuda": True, "packages": ["torch", "triton"]}
TIMEOUT = 600


def _versions(ctx):
    import triton

    ctx.note(f"torch {ctx.torch.__version__}, triton {triton.__version__}, {ctx.torch.cuda.get_device_name()}")


def _flex_synced(q, k, v):
    import torch

    out = compiled_flex()(q, k, v)
    torch.cuda.synchronize()
    return out


def _inputs(ctx, d):
    return qkv(ctx, b=1, hq=4, hk=4, sq=256, sk=256, d=d, dtype=ctx.torch.bfloat16)


def reproduce(ctx):
    _versions(ctx)
    q, k, v = _inputs(ctx, 46)
    ctx.expect_error(_flex_synced, q, k, v)


def control(ctx):
    _versions(ctx)
    q, k, v = _inputs(ctx, 48)
    out = ctx.call(_flex_synced, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)


def fix_1(ctx):
    q, k, v = _inputs(ctx, 46)
    out = ctx.call(sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)


def fix_2(ctx):
    ctx.skip("reading which kernel the log names: nothing to run")
