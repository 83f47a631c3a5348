"""memory_efficient_attention() got an unexpected keyword argument: the installed xFormers predates
a keyword the caller passes (output_dtype arrived in 0.0.25).

Python's own argument check, so no GPU is needed: on xformers 0.0.24 (with torch 2.2.0, its
build) `output_dtype=` is refused before anything else runs. Fix 1 (print the version and the
signature) runs in a child process, as the record's command does. Fix 2's claim is about the
signature of a current release: on 0.0.28.post3 the keywords the record names (attn_bias, p, op,
scale, output_dtype) all bind, which is exactly the check that raised; the kernel itself needs a
GPU. Fix 3 (turn xFormers off) is an application switch: skipped."""

import inspect
import re

from verification.cases.xformers._xf import child, cpu_qkv, mea, needs

BACKEND = "xformers"
REQUIRES = {"packages": ["torch", "xformers.ops"]}
TIMEOUT = 180


def reproduce(ctx):
    needs(ctx, below="0.0.25", why="output_dtype is a keyword from 0.0.25 on")
    t = ctx.torch
    ctx.expect_error(mea, *cpu_qkv(ctx), output_dtype=t.float32)


def fix_1(ctx):
    out = child(["-c", "import xformers, xformers.ops, inspect; print(xformers.__version__, xformers.__file__); "
                 "print(inspect.signature(xformers.ops.memory_efficient_attention))"])
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or len(lines) < 2:
        from errkb.verify.case import Refuted

        ctx.observed = {"class": "child", "message": out.stderr[-2000:]}
        raise Refuted(f"the command exited with {out.returncode}")
    import xformers

    ctx.note("printed: " + " | ".join(lines[-2:]))
    has = "output_dtype" in lines[-1]
    expect = not (tuple(int(x) for x in re.findall(r"\d+", xformers.__version__)[:3]) < (0, 0, 25))
    ctx.close([int(xformers.__version__ in lines[-2]), int(has)], [1, int(expect)], atol=0,
              what="version printed, output_dtype in the printed signature as the release says")


def fix_2(ctx):
    needs(ctx, low="0.0.25", why="the fix is a release that has every keyword the record names")
    import xformers.ops as xops

    t = ctx.torch
    q, k, v = cpu_qkv(ctx)
    sig = inspect.signature(xops.memory_efficient_attention)
    ctx.call(lambda: sig.bind(q, k, v, attn_bias=None, p=0.0, op=None, scale=0.125, output_dtype=t.float16))
    ctx.note(f"signature {sig}: every keyword binds; the call itself needs a GPU (CPU tensors are refused by the dispatcher)")


def fix_3(ctx):
    ctx.skip("turning xFormers off is an application option (the web UI's --xformers), not run here")
