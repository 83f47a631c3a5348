"""memory_efficient_attention on CPU tensors: every kernel's block of the dispatcher's refusal says
"device=cpu (supported: {'cuda'})".

Run on a CPU-only machine with the real xformers wheel and the torch it was built for
(0.0.28.post3 with torch 2.5.1+cu124: its C++ extension loads, so the kernel list is the CUDA one,
fa2F and cutlassF-pt, as a GPU user whose tensors stayed on the host sees it). Fix 1 moves the
work to a GPU: not here. Fix 2 (leave xformers off on the CPU, PyTorch's SDPA instead) runs."""

from verification.cases._common import TOL, ref_attention
from verification.cases.xformers._xf import cpp_loaded, cpu_qkv, mea

BACKEND = "xformers"
REQUIRES = {"packages": ["torch", "xformers.ops"]}
TIMEOUT = 180


def reproduce(ctx):
    ctx.note(f"xformers C++ extension loaded: {cpp_loaded()}")
    q, k, v = cpu_qkv(ctx)
    ctx.expect_error(mea, q, k, v)


def fix_1(ctx):
    ctx.skip("moving the model and inputs to 'cuda' needs a GPU")


def fix_2(ctx):
    # The guard the fix writes: xformers only when the tensors are on a CUDA device, SDPA otherwise.
    t = ctx.torch

    def attention(q, k, v):
        if q.device.type == "cuda":
            return mea(q, k, v)
        return t.nn.functional.scaled_dot_product_attention(*(x.transpose(1, 2) for x in (q, k, v))).transpose(1, 2)

    q, k, v = cpu_qkv(ctx, dtype=t.float32)
    out = ctx.call(attention, q, k, v)
    ctx.close(out, ref_attention(q, k, v), **TOL)
