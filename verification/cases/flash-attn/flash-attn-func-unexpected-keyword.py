"""A caller passes a keyword the installed flash-attn function lacks:
"flash_attn_varlen_func() got an unexpected keyword argument 'softcap'" (softcap arrived in 2.6.0).

Python's own argument check, raised before the function body runs, so no GPU is needed:
flash-attn's own Python files (git tag v2.5.9.post1) with the compiled module stood in
(verification/cases/flash-attn/_fa_py.py), called with small CPU tensors. Fix 1 (upgrade) is
checked on v2.8.3: the same call's arguments bind (running it needs a GPU). Fix 2 (attn_implementation
='sdpa' in transformers) is about the caller, not flash-attn: not run here."""

import inspect
from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa_py")

BACKEND = "fa2"
REQUIRES = {"packages": ["torch"]}
TIMEOUT = 180


def _args(ctx):
    t = ctx.torch
    q, k, v = (t.randn(10, 2, 64, dtype=t.float16) for _ in range(3))
    cu = t.tensor([0, 4, 10], dtype=t.int32)
    return (q, k, v, cu, cu, 6, 6), {"causal": True, "softcap": 30.0}


def reproduce(ctx):
    fa.needs(ctx, low="2.0.0", below="2.6.0", why="softcap is a keyword from 2.6.0")
    fi = fa.interface(ctx)
    args, kwargs = _args(ctx)
    ctx.expect_error(fi.flash_attn_varlen_func, *args, **kwargs)


def fix_1(ctx):
    fa.needs(ctx, low="2.6.0", why="the fix is a release with softcap")
    fi = fa.interface(ctx)
    args, kwargs = _args(ctx)
    ctx.call(lambda: inspect.signature(fi.flash_attn_varlen_func).bind(*args, **kwargs))
    ctx.note("flash_attn_varlen_func takes softcap here; running it needs a GPU")


def fix_2(ctx):
    ctx.skip("attn_implementation='sdpa' is a transformers setting, not part of this flash-attn environment")
