"""FA3's varlen forward needs max_seqlen_q and max_seqlen_k; sgl_kernel's wrapper raises a ValueError without them."""

from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn_interface", "flash_attn_3"]}
# The record's message is sgl_kernel's (its flash_attn_varlen_func); upstream FA3 has no such ValueError.
# The reproduce step runs both kernel wheels' own flash_attn.py (their Python files, which run.sh's
# call 3 unpacks: verification/cases/sglang/_sglk.py) with the compiled flash_ops stood in: the
# wrapper checks the maxima before it calls any kernel, so a call into the stand-in is an error.


def _inputs(ctx):
    q, k, v = fa.packed(ctx, hk=2)
    cu = fa.cu_seqlens(ctx, fa.LENS)
    return q, k, v, cu, cu


def reproduce(ctx):
    import importlib

    from verification.cases.sglang._sglk import WHEELS, kernel_package

    for wheel in WHEELS:
        with kernel_package(ctx, wheel, standin=("flash_ops",)):
            wrapper = importlib.import_module("sgl_kernel.flash_attn")
            ctx.expect_error(wrapper.flash_attn_varlen_func, *_inputs(ctx))


def _with_maxima(q, k, v, cu_q, cu_k, **kwargs):
    """The record's fix_1: the longest query and key lengths, read from the offsets once."""
    max_q = int((cu_q[1:] - cu_q[:-1]).max())
    max_k = int((cu_k[1:] - cu_k[:-1]).max())
    return fa.fa3().flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_seqlen_q=max_q, max_seqlen_k=max_k, **kwargs)


def fix_1(ctx):
    q, k, v, cu_q, cu_k = _inputs(ctx)
    out = fa.first(ctx.call(_with_maxima, q, k, v, cu_q, cu_k, causal=True))
    ctx.close(out, fa.varlen_ref(q, k, v, cu_q, cu_k, causal=True), **fa.TOL)


def control(ctx):
    from errkb.verify.case import attempt

    q, k, v, cu_q, cu_k = _inputs(ctx)
    # for the record's meaning: what upstream FA3's own operator says without the maxima (a note only)
    _, raised = attempt(fa.fa3().flash_attn_varlen_func, q, k, v, cu_q, cu_k, None, None)
    ctx.note(f"FA3 with max_seqlen_q=None: {type(raised).__name__}: {raised}" if raised else "FA3 ran without maxima")
    fa.varlen_matches(ctx, fa.fa3().flash_attn_varlen_func, q, k, v, cu_q, cu_k)
