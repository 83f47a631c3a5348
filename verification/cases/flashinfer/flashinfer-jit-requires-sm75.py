"""FlashInfer's JIT refuses when no target architecture is sm75 or newer: "FlashInfer requires GPUs with
sm75 or higher".

Where a user meets it without a V100: a machine with no visible GPU (a `docker build` step, a CPU node)
JIT-compiling FlashInfer's kernels. This machine is such a one (no GPU, torch 2.13.0+cpu), so the empty
target set is real, not pretended. flashinfer-python 0.7.2 (PyPI wheel, `--no-deps`, see
_flashinfer_jit.py); the call is the JIT spec of FlashInfer's SiLU-and-mul module
(`flashinfer.jit.activation.gen_act_and_mul_module("silu")`), the first thing any kernel call or
pre-compile step does: gen_jit_spec checks the targets before writing anything.

Reproduce: with no FLASHINFER_CUDA_ARCH_LIST (nothing visible) and with it set to "7.0" (a V100 list),
the spec raises the record's RuntimeError (0.7.2 adds the detected set). Fix 1 (another backend on a
V100) needs that GPU and a server: skipped. Fix 2: the fix's FLASHINFER_CUDA_ARCH_LIST makes the spec
without a device. Fix 3: the fix's check command runs and shows what FlashInfer saw (no device).
Control: "7.5" (a T4) passes the check."""

from verification.cases import _flashinfer_jit as fi
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
VERSION = "0.7.2"
FIX_2 = "8.0 8.6 8.9 9.0a"
FIX_3 = ("import torch; print(torch.cuda.is_available(), "
         "[torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())])")


def reproduce(ctx):
    res = fi.run(ctx, VERSION, "import logging; logging.basicConfig(level=logging.WARNING)\n" + fi.SPEC)
    logged = "Failed to get device capability" in res.output
    ctx.note(f"no device visible: FlashInfer {'logged' if logged else 'did not log'} 'Failed to get device capability'")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])
    v100 = fi.run(ctx, VERSION, fi.SPEC, arch_list="7.0")
    ctx.expect_error(_venv.reraise, v100.output, ctx.record["template"])


def fix_1(ctx):
    ctx.skip("needs a V100 (sm70) and an SGLang/vLLM server to switch to another backend")


def fix_2(ctx):
    res = fi.run(ctx, VERSION, fi.SPEC, arch_list=FIX_2)
    ctx.call(_venv.finished, res, "spec silu_and_mul", "making the JIT spec")


def fix_3(ctx):
    env, _ = fi.site(ctx, VERSION)
    res = env.python_run(FIX_3)
    ctx.note(f"the fix's check command printed (last line): {(res.output.strip().splitlines() or [''])[-1][:200]}")

    def shows_no_device():
        _venv.reraise(res.output)
        if res.output.strip().splitlines()[-1:] != ["False []"]:
            raise AssertionError(f"expected no visible device on this machine: {res.tail(300)}")

    ctx.call(shows_no_device)


def control(ctx):
    res = fi.run(ctx, VERSION, fi.SPEC, arch_list="7.5")
    ctx.call(_venv.finished, res, "spec silu_and_mul", "making the JIT spec")
