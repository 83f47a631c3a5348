"""bf16 q/k/v with a float32 additive mask through SDPA's math implementation while the tensors are
traced (torch.compile): the mask add is done out of place on fake tensors, promotes the scores to
float32, and the scores @ value product mixes float32 with bf16.

reproduce (CUDA): the math backend forced (sdpa_kernel(MATH)) inside a torch.compile'd function, bf16
q/k/v, float32 padding mask built without a dtype. The step also notes what eager math and a
FakeTensorMode trace of the same call answer. The record says this does not reproduce on the CPU
(the CPU math path computes low-precision inputs in float32), so the step needs a GPU.
fix 1 (mask in q's dtype), fix 2 (a bool mask): the same compiled call, on the GPU where there is
one, else on the CPU; each matches fp32 attention with the same mask.
control: eager math (no tracing) with the float32 mask as it is: the in-place add keeps the scores
in bf16 and the call runs and matches."""

from errkb.verify.case import attempt
from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import gpu_if_any, in_backends, padding_mask, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"packages": ["torch"]}
STEP_REQUIRES = {"reproduce": {"cuda": True}}
TIMEOUT = 600
MATH = ["MATH"]


def _inputs(ctx):
    t = ctx.torch
    ctx.seed(0)
    q, k, v = qkv(ctx, d=64, dtype=t.bfloat16)
    keep = padding_mask(ctx)
    mask = t.zeros(128, 128, device=ctx.device).masked_fill(~keep, float("-inf"))  # float32: no dtype given
    return q, k, v, keep, mask


def _compiled(ctx):
    ctx.torch._dynamo.reset()
    return ctx.torch.compile(lambda q, k, v, m: in_backends(MATH, sdpa, q, k, v, attn_mask=m))


def _what(fn, *args):
    _, exc = attempt(fn, *args)
    return "runs" if exc is None else f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"


def _fake(q, k, v, mask):
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        fq, fk, fv, fm = (mode.from_tensor(x) for x in (q, k, v, mask))
        return in_backends(MATH, sdpa, fq, fk, fv, attn_mask=fm)


def reproduce(ctx):
    ctx.device = "cuda"
    q, k, v, _, mask = _inputs(ctx)
    ctx.note("eager math, same inputs: " + _what(in_backends, MATH, sdpa, q, k, v, mask))
    ctx.note("FakeTensorMode, same inputs: " + _what(_fake, q, k, v, mask))
    ctx.expect_error(_compiled(ctx), q, k, v, mask)


def fix_1(ctx):
    gpu_if_any(ctx)
    q, k, v, keep, mask = _inputs(ctx)
    out = ctx.call(_compiled(ctx), q, k, v, mask.to(q.dtype))
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=keep), **TOL)


def fix_2(ctx):
    gpu_if_any(ctx)
    q, k, v, keep, _ = _inputs(ctx)
    out = ctx.call(_compiled(ctx), q, k, v, keep)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=keep), **TOL)


def control(ctx):
    gpu_if_any(ctx)
    q, k, v, keep, mask = _inputs(ctx)
    out = ctx.call(in_backends, MATH, sdpa, q, k, v, attn_mask=mask)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd", mask=keep), **TOL)
