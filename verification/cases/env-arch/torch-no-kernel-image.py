"""PyTorch's own kernels with no machine code the GPU can run: the first CUDA kernel torch launches
(here SDPA's, an attention call) fails with "no kernel image is available for execution on the
device", raised by torch's launch check as torch.AcceleratorError (a RuntimeError).

This GPU is one the torch build has code for (torch 2.11.0+cu130 is built for sm_75 sm_80 sm_86
sm_90 sm_100 sm_120, and its fatbinaries hold no PTX at all: read from libtorch_cuda.so's
.nv_fatbin sections on a CPU machine, 2026-12-07). What the record describes, a build without the
GPU's architecture and without PTX, is made here with the CUDA driver's own switch for it:
CUDA_FORCE_PTX_JIT=1 makes the driver ignore every embedded cubin and load only PTX, as NVIDIA's
compatibility guides use it to test whether an application will run on a GPU generation it has
no machine code for. With no PTX in the build, every torch kernel then has no image for this GPU.
What that does not show: torch.cuda.get_arch_list() still lists this GPU's sm_XY (the build does
have it), so the half of fix 1 that reads the arch list is checked only on the healthy side.

Each run is a child process (the switch is read when the CUDA context is made, and a failed launch
ends the context); the child re-raises torch's exception as a RuntimeError with the same message."""

from verification.cases import _child, _venv
from verification.cases._common import TOL, ref_attention

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "packages": ["torch"]}
TIMEOUT = 300

FORCE_PTX = {"CUDA_FORCE_PTX_JIT": "1"}

# an attention call on the GPU; q, k, v are made on the CPU and copied (a copy launches no kernel),
# so SDPA's is the first kernel torch launches. SDPA may pick only torch's own kernels (flash,
# memory-efficient, math): cuDNN's attention engines are another library's code.
SDPA = r'''
import sys
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
torch.manual_seed(0)
q, k, v = (torch.randn(2, 4, 128, 64, dtype=torch.bfloat16).cuda() for _ in range(3))
try:
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
except RuntimeError as exc:
    print(f"errkb: raised {type(exc).__module__}.{type(exc).__name__}", flush=True)
    raise RuntimeError(str(exc)) from None
torch.save({"q": q.cpu(), "k": k.cpu(), "v": v.cpu(), "out": out.cpu()}, sys.argv[1])
print("errkb: ran", flush=True)
'''

# the record's fix 1, as written (one line of Python), with the outcome printed on a line of its own
FIX_1 = r'''
import torch
try:
    print(torch.__version__, torch.version.cuda, torch.cuda.get_device_capability(0), torch.cuda.get_arch_list()); print(torch.zeros(1).cuda() + 1)
except RuntimeError as exc:
    print(f"errkb: raised {type(exc).__module__}.{type(exc).__name__}", flush=True)
    raise RuntimeError(str(exc)) from None
print("errkb: value", float((torch.zeros(1).cuda() + 1).item()), flush=True)
'''


def _run(ctx, code: str, name: str, env: dict):
    res, saved = _child.run(ctx, code, name, env=env)
    how = "CUDA_FORCE_PTX_JIT=1" if env else "default driver settings"
    ctx.note(f"{name} ({how}): exit {res.returncode}; {_child.printed(res.output, 'errkb: raised') or ''} "
             f"{_venv.last_exception(res.output, 240) if res.returncode else 'ran'}")
    return res, saved


def reproduce(ctx):
    res, _ = _run(ctx, SDPA, "sdpa-force-ptx", FORCE_PTX)
    ctx.expect_error(_venv.reraise, res.output)
    if _child.printed(res.output, "errkb: raised") is None:
        ctx.note("the child failed before the SDPA call")


def fix_1(ctx):
    """The diagnostic one-liner fails on the same error when torch's own kernels cannot run, and
    prints the GPU's capability, an arch list that has it and a working tensor when they can."""
    from errkb.verify.case import Refuted

    bad, _ = _run(ctx, FIX_1, "fix1-force-ptx", FORCE_PTX)
    ctx.expect_error(_venv.reraise, bad.output)
    good, _ = _run(ctx, FIX_1, "fix1-default", {})
    value = ctx.call(_child.printed, good.output, "errkb: value")
    if value is None:
        ctx.call(_venv.reraise, good.output)
        raise RuntimeError(f"the one-liner did not finish: {good.tail(600)}")
    major, minor = ctx.torch.cuda.get_device_capability()
    first = next((line for line in good.output.splitlines() if line.startswith(ctx.torch.__version__)), "")
    ctx.note(f"healthy side printed: {first[:300]}")
    if f"sm_{major}{minor}" not in first:
        raise Refuted(f"the arch list printed does not have sm_{major}{minor}: {first[:300]}")
    ctx.close([float(value)], [1.0], atol=0.0, what="torch.zeros(1).cuda() + 1")


def fix_2(ctx):
    ctx.skip("installs another torch build from PyTorch's cu128 index (no registry on the GPU machine)")


def fix_3(ctx):
    ctx.skip("installs torch's cu126 build for a Pascal/Maxwell GPU (neither the GPU nor the index is here)")


def control(ctx):
    """The same attention call with the driver's default settings runs and matches the fp32 reference."""
    res, saved = _run(ctx, SDPA, "sdpa-default", {})
    if saved is None:
        ctx.call(_venv.reraise, res.output)
        raise RuntimeError(f"the child neither ran nor printed an exception: {res.tail(600)}")
    ref = ref_attention(saved["q"], saved["k"], saved["v"], layout="bhsd")
    ctx.close(saved["out"], ref, **TOL)
