"""cuDNN SDPA's backward given a grad_output whose strides differ from the output's: torch builds
compiled against cuDNN older than 9.5.1 warn once ("cuDNN SDPA backward got grad_output.strides()
!= output.strides(), attempting to materialize ...") and copy it; newer builds do not have that code
(aten/src/ATen/native/cudnn/MHA.cpp: `#if CUDNN_VERSION < 90501`).

Each step runs a training step of SDPA restricted to its cuDNN backend (fp16, 4 heads of 64, 128
tokens) with the upstream gradient made in (batch, tokens, heads, dim) memory and viewed as SDPA's
(batch, heads, tokens, dim), so its strides differ from the output's while its innermost stride is
1, as after a transpose in the layer above. The reproduce step reads the cuDNN version torch was
*compiled* against (torch._C._cudnn.getCompileVersion(), which is what the #if tests; the runtime
version is noted too): below 9.5.1 the warning must appear; from 9.5.1 on the record says it cannot,
so the step checks that the same backward runs without it and is then skipped, the warning being
out of this build's reach. Fix 1 runs the record's version command in a child and checks that it
prints the torch and cuDNN versions this process has; fix 2 turns the cuDNN backend off and the
same step must run without the warning and give fp32-reference gradients."""

from errkb.verify.case import Refuted
from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import in_backends, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}
B, H, S, D = 2, 4, 128, 64


def _inputs(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx, b=B, hq=H, hk=H, sq=S, sk=S, d=D, dtype=t.float16, requires_grad=True)
    g = t.randn(B, S, H, D, device=ctx.device, dtype=t.float16).transpose(1, 2)  # strides differ from out's
    return q, k, v, g


def _train_step(backends, q, k, v, g):
    out = in_backends(backends, sdpa, q, k, v) if backends else sdpa(q, k, v)
    if out.stride() == g.stride():
        raise RuntimeError(f"the upstream gradient has the output's strides {out.stride()}: not the record's situation")
    out.backward(g)
    return out


def _cudnn_usable(ctx, q, k, v):
    """The cuDNN backend must take these inputs at all, else this GPU/build cannot show anything."""
    from errkb.verify.case import attempt

    _, exc = attempt(in_backends, ["CUDNN_ATTENTION"], sdpa, q.detach(), k.detach(), v.detach())
    if exc is not None:
        ctx.skip(f"SDPA's cuDNN backend does not run these inputs here: {type(exc).__name__}: {str(exc)[:200]}")


def _close_grads(ctx, q, k, v, g):
    qr, kr, vr = (x.detach().float().requires_grad_() for x in (q, k, v))
    ref_attention(qr, kr, vr, layout="bhsd").backward(g.float())
    for name, got, want in (("dq", q.grad, qr.grad), ("dk", k.grad, kr.grad), ("dv", v.grad, vr.grad)):
        ctx.close(got, want, what=name, **TOL)


def reproduce(ctx):
    t = ctx.torch
    compiled = tuple(t._C._cudnn.getCompileVersion())
    ctx.note(f"torch {t.__version__} compiled against cuDNN {'.'.join(map(str, compiled))}, "
             f"runtime cuDNN {t.backends.cudnn.version()}")
    q, k, v, g = _inputs(ctx)
    _cudnn_usable(ctx, q, k, v)
    if compiled < (9, 5, 1):
        ctx.expect_warning(_train_step, ["CUDNN_ATTENTION"], q, k, v, g)
        return
    ctx.call(_train_step, ["CUDNN_ATTENTION"], q, k, v, g)  # the record: no such warning from 9.5.1 on
    ctx.skip(f"this torch is compiled against cuDNN {'.'.join(map(str, compiled))} (>= 9.5.1), where MHA.cpp has "
             "no such warning; the same cuDNN backward ran without it, as the record says for these builds")


def fix_1(ctx):
    import subprocess
    import sys

    t = ctx.torch
    cmd = "import torch; print(torch.__version__, torch.backends.cudnn.version())"
    out = subprocess.run([sys.executable, "-c", cmd], capture_output=True, text=True, timeout=300)
    line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    ctx.observed = {"printed": line, "stderr": out.stderr[-500:]}
    if line != f"{t.__version__} {t.backends.cudnn.version()}":
        raise Refuted(f"the version command printed {line!r}, not this process's torch and cuDNN")
    ctx.note(f"python -c '{cmd}' printed: {line}")


def fix_2(ctx):
    t = ctx.torch
    q, k, v, g = _inputs(ctx)
    before = t.backends.cuda.cudnn_sdp_enabled()
    t.backends.cuda.enable_cudnn_sdp(False)
    try:
        ctx.call(_train_step, None, q, k, v, g)
    finally:
        t.backends.cuda.enable_cudnn_sdp(before)
    _close_grads(ctx, q, k, v, g)
