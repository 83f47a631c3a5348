"""FA4 4.0.0b4's SM90 backward with head dims (192, 128): the CuTe DSL 4.4.1 refuses the warpgroup
MMA ("expects the M-mode to be 64, but got 96"); the installed release (4.0.0b5 or later) runs it,
and so does SDPA. b4 needs the DSL and quack of its time, so its steps run in a child process
(verification/cases/_fa4_releases.py); gradients are compared with an fp32 reference."""

from verification.cases import _fa4_releases, _venv

REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn.cute"]}
TIMEOUT = 900
GRAD_TOL = {"atol": 5e-2, "rtol": 5e-2}

def _run(ctx, head_dim, head_dim_v, how="fa4", release=None):
    attention = _fa4_releases.SDPA_FUNC if how == "sdpa" else _fa4_releases.FLASH_ATTN_FUNC
    code = _fa4_releases.grad_child(attention, batch=1, seqlen=512, head_dim=head_dim, head_dim_v=head_dim_v)
    return _fa4_releases.run(ctx, code, f"fa4-sm90-bwd-{head_dim}-{head_dim_v}-{how}-{release}",
                             f"({head_dim}, {head_dim_v}) {how}", release=release, old_dsl=True)


def reproduce(ctx):
    res, _ = _run(ctx, 192, 128, release="4.0.0b4")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])  # re-raised under its own class name


def fix_1(ctx):
    # upgrade: the installed release (the payload's, 4.0.0b5 or later) runs the same backward
    _fa4_releases.grads_match(ctx, *_run(ctx, 192, 128), GRAD_TOL)


def fix_2(ctx):
    # SDPA for the same shapes, on the installed torch
    _fa4_releases.grads_match(ctx, *_run(ctx, 192, 128, how="sdpa"), GRAD_TOL)


def control(ctx):
    # 4.0.0b4 with head dim 128, the shape its single SM90 backward configuration was tuned for
    _fa4_releases.grads_match(ctx, *_run(ctx, 128, 128, release="4.0.0b4"), GRAD_TOL)
