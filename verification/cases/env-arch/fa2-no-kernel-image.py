"""FlashAttention-2 built without this GPU's arch: the first call fails with 'no kernel image'.

The binary is upstream's flash-attn 2.8.3 built by the project's FA2 recipe for sm_80 only
(`FA2_ARCH=80 bash verification/device/fa2-build.sh`: SASS for sm_80, no PTX), the shape of a
wheel or source build whose arch list lacks the GPU it runs on. It is imported in a child process
(the worker's own `flash_attn` is the build for this GPU) and the child's error line is passed on
word for word. The fix step calls the build made for this GPU, the record's "build from source for
your architecture"; the last fix, PyTorch's SDPA, runs on any GPU torch supports."""

import os
import re
import subprocess
import sys

from verification.cases._common import TOL, qkv, ref_attention

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm90+", "packages": ["torch"]}
STEP_REQUIRES = {"fix_2": {"cuda": True, "arch": "sm90+", "packages": ["flash_attn", "flash_attn_2_cuda"]}}
TIMEOUT = 300
FINAL_ERROR = re.compile(r"((?:torch\.)?(?:Runtime|Accelerator)Error): (.*)")
SITE_VARIABLE = "ERRKB_FA2_SM80_SITE"  # set by flash-attn-install.sh when .gpu/fa-sm80 is carried

CHILD = """
import torch, flash_attn_2_cuda
from flash_attn import flash_attn_func
print("module:", flash_attn_2_cuda.__file__, flush=True)
q, k, v = (torch.randn(2, 128, 4, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
flash_attn_func(q, k, v)
torch.cuda.synchronize()
"""


def _call_foreign_build(ctx):
    site = os.environ.get(SITE_VARIABLE, "")
    if not site or not os.path.isdir(os.path.join(site, "flash_attn")):
        ctx.skip(f"no FA2 build for another arch ({SITE_VARIABLE}: carry .gpu/fa-sm80, docs/verification.md)")
    env = dict(os.environ, PYTHONPATH=site)
    child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=240)
    ctx.note("child imported " + (child.stdout.strip().splitlines() or ["nothing"])[0])
    # torch 2.9+ prints its CUDA errors as torch.AcceleratorError (a RuntimeError), older ones as RuntimeError
    errors = [m for line in child.stderr.splitlines() if (m := FINAL_ERROR.match(line))]
    if errors:
        ctx.note(f"child raised {errors[-1].group(1)}")
        raise RuntimeError(errors[-1].group(2))
    ctx.note(f"child exit status {child.returncode}; stderr tail: {child.stderr[-800:]!r}")


def reproduce(ctx):
    ctx.expect_error(lambda: _call_foreign_build(ctx))


def fix_2(ctx):
    from flash_attn import flash_attn_func

    q, k, v = qkv(ctx)
    ctx.close(ctx.call(flash_attn_func, q, k, v), ref_attention(q, k, v), **TOL)


def fix_3(ctx):
    t = ctx.torch
    q, k, v = qkv(ctx, layout="bhsd")
    out = ctx.call(t.nn.functional.scaled_dot_product_attention, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)
