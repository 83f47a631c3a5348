"""Shared steps of the two cuDNN-frontend "no plan" records (sdpa-cudnn-no-execution-plans,
sdpa-cudnn-no-valid-execution-plans-built): the same failure, worded by different
cudnn-frontend versions.

Neither record names one input that the cuDNN of a given torch refuses; they name the kinds
(small or odd head dims and sequence lengths, a mask, dropout, a GPU newer than the cuDNN). So
the reproduce step forces the cuDNN backend on a short list of such inputs, notes what each
does, and passes if one of them raises the record's message. Where none does, the step is
refuted: this torch/cuDNN serves every input tried, which says nothing against the message on
other GPUs or releases, and the note lists what was tried."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import in_backends, qkv, sdpa

CUDNN = ["CUDNN_ATTENTION"]


def candidates(ctx):
    """(label, q, k, v, kwargs, backward) for inputs of the kinds the records name."""
    t = ctx.torch
    f16 = t.float16
    out = []
    # diffusers#9704's repro: tiny fp16 shapes (head dim 16, 8 tokens)
    q, k, v = (t.rand(2, 4, 8, 16, dtype=f16, device=ctx.device) for _ in range(3))
    out.append(("fp16 (2,4,8,16) as in diffusers#9704", q, k, v, {}, False))
    # a CLIP-text-encoder-like shape: 77 tokens, head dim 64, causal
    q, k, v = qkv(ctx, b=2, hq=8, hk=8, sq=77, sk=77, d=64, dtype=f16)
    out.append(("fp16 77 tokens, d=64, is_causal", q, k, v, {"is_causal": True}, False))
    # odd sequence lengths with a boolean padding mask
    q, k, v = qkv(ctx, b=2, sq=77, sk=33, d=64)
    m = t.ones(77, 33, dtype=t.bool, device=ctx.device)
    m[:, 30:] = False
    out.append(("bf16 77x33 tokens, d=64, bool attn_mask", q, k, v, {"attn_mask": m}, False))
    # a large head dim, forward and backward (cuDNN's d > 128 support came late)
    q, k, v = qkv(ctx, d=256, requires_grad=True)
    out.append(("bf16 d=256, forward+backward", q, k, v, {}, True))
    # different head dims for q/k and v (pytorch#129579)
    q, k, v = qkv(ctx, d=128, dv=144)
    out.append(("bf16 d_qk=128, d_v=144 (pytorch#129579)", q, k, v, {}, False))
    # dropout in training
    q, k, v = qkv(ctx, d=64, requires_grad=True)
    out.append(("bf16 d=64, dropout_p=0.1, forward+backward", q, k, v, {"dropout_p": 0.1}, True))
    # a single query against a long key sequence, backward (pytorch#138529)
    q, k, v = qkv(ctx, b=1, hq=16, hk=16, sq=1, sk=2 ** 16, d=64, requires_grad=True)
    out.append(("bf16 1 query x 65536 keys, backward (pytorch#138529)", q, k, v, {}, True))
    return out


def _run(q, k, v, kwargs, backward):
    out = in_backends(CUDNN, sdpa, q, k, v, **kwargs)
    if backward:
        out.float().sum().backward()
    return out


def reproduce(ctx):
    from errkb.verify.case import attempt, match_message

    ctx.note(f"cuDNN {ctx.torch.backends.cudnn.version()}")
    hit = None
    for label, q, k, v, kw, bwd in candidates(ctx):
        _, exc = attempt(_run, q, k, v, kw, bwd)
        if exc is None:
            ctx.note(f"{label}: runs")
            continue
        how = match_message(ctx.record["template"], str(exc))
        ctx.note(f"{label}: {type(exc).__name__} (template match: {how}): {str(exc).splitlines()[0][:200]}")
        if how and hit is None:
            hit = (q, k, v, kw, bwd)
    if hit is None:
        label, q, k, v, kw, bwd = candidates(ctx)[0]
        hit = (q, k, v, kw, bwd)  # refuted with what the first input did
    ctx.expect_error(_run, *hit)


def _default_input(ctx):
    """The first candidate (diffusers#9704's shape), for the fixes: a plain SDPA call."""
    label, q, k, v, _, _ = candidates(ctx)[0]
    return q, k, v


def disable_cudnn(ctx):
    """torch.backends.cuda.enable_cudnn_sdp(False), then the default SDPA call: it runs and
    matches (the switch is restored afterwards: it is process-wide)."""
    t = ctx.torch
    q, k, v = _default_input(ctx)
    was = t.backends.cuda.cudnn_sdp_enabled()
    t.backends.cuda.enable_cudnn_sdp(False)
    try:
        out = ctx.call(sdpa, q, k, v)
        chosen = t._fused_sdp_choice(q, k, v)
    finally:
        t.backends.cuda.enable_cudnn_sdp(was)
    ctx.note(f"backend SDPA chooses with cuDNN disabled: {_backend_name(chosen)}")
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)


def other_backends(ctx):
    """sdpa_kernel with FLASH, EFFICIENT and MATH only: the call runs and matches."""
    q, k, v = _default_input(ctx)
    out = ctx.call(in_backends, ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH"], sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)


def _backend_name(value):
    from torch.nn.attention import SDPBackend

    for name in ("ERROR", "MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "OVERRIDEABLE"):
        member = getattr(SDPBackend, name, None)
        if member is not None and int(member) == int(value):
            return name
    return str(value)


_CHOICE = """
import torch
q, k, v = (torch.randn(2, 4, 128, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
print(int(torch._fused_sdp_choice(q, k, v)))
"""


def _choice_in_fresh_python(set_var):
    """SDPA's default backend for a bf16 (2, 4, 128, 64) call, in a new interpreter with or
    without TORCH_CUDNN_SDPA_DEPRIORITIZED=1 (it is read when torch starts)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env.pop("TORCH_CUDNN_SDPA_DEPRIORITIZED", None)
    if set_var:
        env["TORCH_CUDNN_SDPA_DEPRIORITIZED"] = "1"
    p = subprocess.run([sys.executable, "-c", _CHOICE], env=env, capture_output=True, text=True, timeout=300)
    if p.returncode:
        raise RuntimeError(f"the choice probe failed: {p.stderr[-800:]}")
    return _backend_name(int(p.stdout.strip().splitlines()[-1]))


def deprioritize_env(ctx):
    """TORCH_CUDNN_SDPA_DEPRIORITIZED=1: SDPA's default choice is not cuDNN. The choice without
    the variable is noted for comparison (the records say cuDNN comes first only on some
    releases, GPUs and cuDNN versions)."""
    from errkb.verify.case import Refuted

    ctx.note(f"default choice without the variable: {_choice_in_fresh_python(False)}")
    chosen = _choice_in_fresh_python(True)
    ctx.note(f"default choice with TORCH_CUDNN_SDPA_DEPRIORITIZED=1: {chosen}")
    if chosen == "CUDNN_ATTENTION":
        ctx.observed = {"class": None, "message": f"SDPA still chose {chosen}"}
        raise Refuted("cuDNN is still SDPA's first choice with the variable set")


def control(ctx):
    """A plain bf16 (2, 4, 128, 64) call, which cuDNN serves on sm90: forced onto cuDNN, it runs
    and matches, so the backend itself works here."""
    q, k, v = qkv(ctx, d=64)
    out = ctx.call(in_backends, CUDNN, sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)
