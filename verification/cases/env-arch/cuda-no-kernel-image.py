"""A CUDA extension built for another GPU arch: launching it fails with 'no kernel image'.

The kernel is a plain elementwise scale, built twice with torch's JIT extension builder: once
with TORCH_CUDA_ARCH_LIST=8.0 (sm_80 code only, no PTX to fall back on), and once for the GPU
the case runs on (the record's rebuild fix). Needs nvcc and ninja on the machine."""

from verification.cases._common import TOL
from verification.cases._scale_kernel import build

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm90+", "packages": ["torch", "ninja"]}
TIMEOUT = 600


def _build(arch_list: str):
    """The extension built for `arch_list` (TORCH_CUDA_ARCH_LIST), in a folder of its own."""
    import tempfile

    name = "errkb_scale_" + arch_list.replace(".", "").replace("+", "p").replace(";", "_")
    return build(name, arch_list, tempfile.mkdtemp())


def _x(ctx):
    return ctx.torch.randn(4096, device=ctx.device, dtype=ctx.torch.float32)


def reproduce(ctx):
    ext = _build("8.0")  # SASS for sm_80 only: nothing an sm_90 GPU can load

    def launch():
        ext.scale(_x(ctx), 2.0)
        ctx.torch.cuda.synchronize()

    ctx.expect_error(launch)


def fix_3(ctx):
    major, minor = ctx.torch.cuda.get_device_capability()
    ext = _build(f"{major}.{minor}")  # rebuilt for this GPU
    x = _x(ctx)
    out = ctx.call(ext.scale, x, 2.0)
    ctx.close(out, 2.0 * x, **TOL)


def control(ctx):
    ext = _build("8.0+PTX")  # PTX for compute_80 is JIT-compiled by the driver for newer GPUs
    x = _x(ctx)
    out = ctx.call(ext.scale, x, 3.0)
    ctx.close(out, 3.0 * x, **TOL)
