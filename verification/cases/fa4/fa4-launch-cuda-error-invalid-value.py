"""FlashAttention-4 launch refused with 'CUDA Error: cudaErrorInvalidValue' (written for the H100,
not yet run as a case). The SM90 instance of the record: 4.0.0b4 on nvidia-cutlass-dsl 4.4.1, a
forward and backward call with head dim 192 for query, key and value (the eighth session's probe,
test bwd-192, printed the record's line). The child runs the old release the way
fa4-sm90-bwd-wgmma-m-mode-not-64 does (verification/cases/_fa4_releases.py, old_dsl=True).

The record's SM100 instance (head dims (192, 128) with a short query, on Dao-AILab/flash-attention
main between 3c8ca4e2 and f1284cff) needs a B200 and a source tree of that period; no step covers it.

reproduce: 4.0.0b4, (192, 192), bf16, 512 tokens, 4 heads.
fix_1: the installed release (the payload's) runs the same call; gradients against fp32.
fix_2: SDPA on the same shapes.
control: 4.0.0b4 with head dim 128."""

from verification.cases import _fa4_releases, _venv

REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn.cute"]}
TIMEOUT = 900
GRAD_TOL = {"atol": 5e-2, "rtol": 5e-2}

def _run(ctx, head_dim, how="fa4", release=None):
    attention = _fa4_releases.SDPA_FUNC if how == "sdpa" else _fa4_releases.FLASH_ATTN_FUNC
    code = _fa4_releases.grad_child(attention, batch=1, seqlen=512, head_dim=head_dim)
    return _fa4_releases.run(ctx, code, f"fa4-invalid-value-{head_dim}-{how}-{release}",
                             f"head dim {head_dim} {how}", release=release, old_dsl=release is not None)


def reproduce(ctx):
    res, _ = _run(ctx, 192, release="4.0.0b4")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    _fa4_releases.grads_match(ctx, *_run(ctx, 192), GRAD_TOL)


def fix_2(ctx):
    _fa4_releases.grads_match(ctx, *_run(ctx, 192, how="sdpa"), GRAD_TOL)


def control(ctx):
    _fa4_releases.grads_match(ctx, *_run(ctx, 128, release="4.0.0b4"), GRAD_TOL)
