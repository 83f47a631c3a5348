"""FA4's backward with a head dim that is not a multiple of 32 (104 here) on SM90: 4.0.0b29 fails
to compile its preprocess kernel (the CuTe verifier's "'cute.copy' op expects pred ..."); the
installed release (4.0.0b30 or later) runs it, and so does b29 once the head dim is zero-padded to
a multiple of 32 with the real softmax scale. Gradients are compared with an fp32 reference.

The b29 steps run in a child process whose path puts the b29 wheel's package ahead of the installed
FA4, on the same CuTe DSL and tvm-ffi (verification/cases/_fa4_releases.py)."""

from verification.cases import _fa4_releases, _venv

REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn.cute"]}
# the upgrade fixes SM100 (upstream PR 2698); on SM90 b36 fails otherwise (H100, 2026-12-07)
STEP_REQUIRES = {"fix_1": {"arch": "sm100"}}
TIMEOUT = 900
GRAD_TOL = {"atol": 5e-2, "rtol": 5e-2}

CHILD = r'''
import re
import sys
import torch
import flash_attn.cute as cute_pkg
from flash_attn.cute import flash_attn_func

D, PAD = HEAD_DIM, PAD_TO
torch.manual_seed(0)
q, k, v = (torch.randn(2, 256, 4, D, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
do = torch.randn(2, 256, 4, D, device="cuda", dtype=torch.bfloat16)
print("errkb: flash_attn.cute from", cute_pkg.__file__, flush=True)
try:
    if PAD:
        pad = lambda t: torch.nn.functional.pad(t, (0, PAD - D))
        out = flash_attn_func(pad(q), pad(k), pad(v), softmax_scale=D ** -0.5)
        out = (out[0] if isinstance(out, tuple) else out)[..., :D]
    else:
        out = flash_attn_func(q, k, v)
        out = out[0] if isinstance(out, tuple) else out
    out.backward(do)
    torch.cuda.synchronize()
except Exception as exc:
    text = " ".join(str(exc).split())  # cutlass-dsl 4.8 wraps its diagnostics over several lines
    found = re.search(r"'cute\.copy' op expects pred.*?predShape: \S+", text)
    line = found.group() if found else text[:300]
    print(f"errkb: raised {type(exc).__module__}.{type(exc).__name__}", flush=True)
    print(f"{type(exc).__name__}: {line}", flush=True)  # the class users see, for the step to re-raise
    sys.exit(1)
torch.save({n: t.detach().float().cpu() for n, t in
            {"q": q, "k": k, "v": v, "do": do, "out": out, "dq": q.grad, "dk": k.grad, "dv": v.grad}.items()},
           sys.argv[1])
print("errkb: ran", flush=True)
'''


def _run(ctx, head_dim: int, pad_to: int = 0, old: bool = False):
    code = CHILD.replace("HEAD_DIM", str(head_dim)).replace("PAD_TO", str(pad_to))
    return _fa4_releases.run(ctx, code, f"fa4-bwd-{head_dim}-{pad_to}-{int(old)}",
                             f"head dim {head_dim}" + (f" padded to {pad_to}" if pad_to else ""),
                             release="4.0.0b29" if old else None)


def reproduce(ctx):
    res, _ = _run(ctx, 104, old=True)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])  # re-raised under its own class name


def fix_1(ctx):
    # upgrade: the installed release (the payload's, 4.0.0b30 or later) runs the same backward
    _fa4_releases.grads_match(ctx, *_run(ctx, 104), GRAD_TOL)


def fix_2(ctx):
    # b29 with q, k, v zero-padded to 128 and the softmax scale of the real head dim
    _fa4_releases.grads_match(ctx, *_run(ctx, 104, pad_to=128, old=True), GRAD_TOL)


def control(ctx):
    # b29 with head dim 128 (a multiple of 32): no padding, no predicate, no error
    _fa4_releases.grads_match(ctx, *_run(ctx, 128, old=True), GRAD_TOL)
