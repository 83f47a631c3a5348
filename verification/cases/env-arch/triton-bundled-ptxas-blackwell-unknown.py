"""Triton 3.0/3.1 run their bundled ptxas (CUDA 12.4) through the shell with --gpu-name=sm_1xx:
"Command '.../triton/backends/nvidia/bin/ptxas ... 2> ...' returned non-zero exit status 255."

No GPU is needed: Triton hands the compile target's architecture to ptxas. Environments made by
uv 0.9.0 (this Python) hold only a Triton wheel from PyPI (and setuptools).

Reproduce: Triton 3.1.0 compiles an element-wise attention kernel (`exp_scores`, no warp shuffles,
no tl.dot) for `GPUTarget("cuda", 120, 32)`; the CalledProcessError is the cause of Triton's
'Internal Triton PTX codegen error' (judged through the chain). The step notes 3.0.0 for sm_100 too.
Fix 1: Triton 3.3.0 compiles the kernel and a row softmax for sm_120 and sm_100 down to a cubin
(nothing runs). The old stopgap (TRITON_PTXAS_PATH at a CUDA 12.8+ ptxas) is not a fix of the
record any more: the step notes what 3.1.0 does with it (see the record's caveat)."""

from verification.cases.triton._compile import EXP_SCORES, SOFTMAX_ROWS, bundled_ptxas, compile_in, compiled, \
    reraise, triton_env

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
OLD, NEW = "3.1.0", "3.3.0"


def _first_line(result: dict) -> str:
    if result.get("ok"):
        return "compiled"
    if result.get("aborted"):
        return result["aborted"]
    return " | ".join(" ".join(item["message"].split())[:220] for item in result["chain"])


def reproduce(ctx):
    other = compile_in(ctx, triton_env(ctx, "3.0.0"), EXP_SCORES, 100)
    ctx.note(f"exp_scores for sm_100 with Triton 3.0.0: {_first_line(other)}")
    result = compile_in(ctx, triton_env(ctx, OLD), EXP_SCORES, 120)
    ctx.note(f"exp_scores for sm_120 with Triton {OLD}: {_first_line(result)}")
    if result.get("aborted"):
        raise RuntimeError(f"the compile child aborted: {result['aborted']}")
    ctx.expect_error(reraise, result)


def fix_1(ctx):
    env = triton_env(ctx, NEW)
    for kernel in (EXP_SCORES, SOFTMAX_ROWS):
        for cc in (120, 100):
            compiled(ctx, compile_in(ctx, env, kernel, cc), f"{kernel[0]} for sm_{cc} with Triton {NEW}")
    stopgap = compile_in(ctx, triton_env(ctx, OLD), EXP_SCORES, 120,
                         TRITON_PTXAS_PATH=bundled_ptxas(env, "ptxas-blackwell"))
    ctx.note(f"not a fix: Triton {OLD} with TRITON_PTXAS_PATH at Triton {NEW}'s ptxas-blackwell (CUDA 12.8), "
             f"sm_120: {_first_line(stopgap)}")
