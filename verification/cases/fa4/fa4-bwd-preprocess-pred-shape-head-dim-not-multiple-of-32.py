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

PRED = r"'cute\.copy' op expects pred.*?predShape: \S+"  # the part of the diagnostic the record is about
PADDED = r'''
def attention(q, k, v):
    from flash_attn.cute import flash_attn_func
    d = q.shape[-1]
    pad = lambda t: torch.nn.functional.pad(t, (0, PAD_TO - d))
    out = flash_attn_func(pad(q), pad(k), pad(v), softmax_scale=d ** -0.5)
    return (out[0] if isinstance(out, tuple) else out)[..., :d]
'''


def _run(ctx, head_dim: int, pad_to: int = 0, old: bool = False):
    attention = PADDED.replace("PAD_TO", str(pad_to)) if pad_to else _fa4_releases.FLASH_ATTN_FUNC
    code = _fa4_releases.grad_child(attention, batch=2, seqlen=256, head_dim=head_dim, focus=PRED)
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
