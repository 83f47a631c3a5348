"""q, k and v in different dtypes: scaled_dot_product_attention's input check (validate_sdpa_input)
refuses them before any backend is chosen, so the step runs wherever torch is: on the GPU where
there is one (as users meet it), else on the CPU. The steps note which.

reproduce: fp16 q and v with an fp32 k (the record's example message).
fix 1: k and v cast to q's dtype; matches fp32 attention.
fix 2: an "adapter" Linear loaded in float32 next to a float16 model makes k and v; cast to the model's
dtype with .to(dtype=...), as the fix says, the call runs and matches.
fix 3: the same mixed call (bf16 q, fp32 k and v) under torch.autocast on the tensors' device with
bfloat16, as the fix says; the note records whether autocast also reconciles fp16 with bf16 (the
caveat, checked here rather than assumed).
control: all three in one dtype."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import gpu_if_any, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"packages": ["torch"]}


def reproduce(ctx):
    gpu_if_any(ctx)
    t = ctx.torch
    q, k, v = qkv(ctx, d=64, dtype=t.float16)
    ctx.expect_error(sdpa, q, k.float(), v)


def fix_1(ctx):
    gpu_if_any(ctx)
    t = ctx.torch
    q, k, v = qkv(ctx, d=64, dtype=t.float16)
    k = k.float()  # the odd one out, as in the trigger
    k, v = k.to(q.dtype), v.to(q.dtype)
    out = ctx.call(sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)


def fix_2(ctx):
    gpu_if_any(ctx)
    t = ctx.torch
    ctx.seed(0)
    b, h, s, d = 2, 4, 64, 32
    unet_proj = t.nn.Linear(h * d, h * d).to(device=ctx.device, dtype=t.float16)  # the main model, fp16
    adapter = t.nn.Linear(h * d, 2 * h * d).to(device=ctx.device)  # an add-on loaded in float32
    x = t.randn(b, s, h * d, device=ctx.device, dtype=t.float16)
    cond = t.randn(b, s, h * d, device=ctx.device, dtype=t.float16)

    def heads(y):
        return y.view(b, s, h, d).transpose(1, 2)

    def forward():
        q = heads(unet_proj(x))
        kv = adapter(cond.to(adapter.weight.dtype))
        k, v = (heads(part) for part in kv.chunk(2, dim=-1))
        return sdpa(q, k, v), (q, k, v)

    try:
        forward()
        raise AssertionError("the float32 adapter did not give the record's error before the fix")
    except RuntimeError as exc:
        ctx.note(f"before the fix: {str(exc)[:160]}")
    adapter = adapter.to(device=unet_proj.weight.device, dtype=unet_proj.weight.dtype)  # the fix's line
    out, (q, k, v) = ctx.call(forward)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)


def fix_3(ctx):
    gpu_if_any(ctx)
    t = ctx.torch
    q, k, v = qkv(ctx, d=64, dtype=t.float32)
    q16 = q.to(t.bfloat16)

    def under_autocast(*args):
        with t.autocast(device_type=ctx.device, dtype=t.bfloat16):
            return sdpa(*args)

    out = ctx.call(under_autocast, q16, k, v)
    ctx.note(f"autocast({ctx.device}, bfloat16): bf16 q with fp32 k, v ran, output {out.dtype}")
    ctx.close(out, ref_attention(q16, k, v, layout="bhsd"), **TOL)
    # the caveat: fp16 q with bf16 k and v under the same autocast (not part of the verdict)
    try:
        under_autocast(q.to(t.float16), k.to(t.bfloat16), v.to(t.bfloat16))
        ctx.note("caveat check: fp16 q with bf16 k, v under bf16 autocast also ran")
    except RuntimeError as exc:
        ctx.note(f"caveat check: fp16 q with bf16 k, v under bf16 autocast raised {str(exc)[:160]}")


def control(ctx):
    gpu_if_any(ctx)
    t = ctx.torch
    q, k, v = qkv(ctx, d=64, dtype=t.float16)
    out = ctx.call(sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)
