"""`import sgl_kernel` on a driver older than CUDA 12.4: "undefined symbol: cuGreenCtx...".

Real wheels on the CPU (verification/cases/_sgl_kernel_abi.py): sgl-kernel 0.3.5 next to torch 2.8.0, the
pair sglang 0.5.1's METADATA pins, so no torch symbol is missing. The driver is a stub libcuda.so.1 made
from a CUDA release's cuda.h (verification/cases/_driver_stub.py): 12.3 stands for a driver whose CUDA
version is below 12.4, 12.4 for one upgraded to it.

Reproduce: with the 12.3 driver, `import sgl_kernel` (0.3.5's __init__ imports common_ops plainly) raises
the loader's ImportError naming a green-context function, one that 12.3's header lacks and 12.4's has.
Fix 2 (a driver of 12.4 or newer): the same pair imports with the 12.4 driver. Fix 3 (an sgl-kernel that
links none of them): sglang 0.5.3's pair (sgl-kernel 0.3.14.post1, torch 2.8.0) imports with the 12.3
driver. Fix 1 reads nvidia-smi on a GPU machine and fix 4 is about cuBLAS/cudart names: not run.
"""

from verification.cases import _abi_wheels as abi
from verification.cases import _driver_stub as stub
from verification.cases import _sgl_kernel_abi as sk

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800


def reproduce(ctx):
    torch = sk.pins(ctx, "0.5.1")["torch"]
    root = abi.unpacked(ctx, "sgl-kernel", "0.3.5")
    green = [n for n in stub.undefined(sk.common_ops(root, "0.3.5")) if "Green" in n or "DevResource" in n
             or "DevSmResource" in n]
    ctx.note("sgl-kernel 0.3.5 common_ops.abi3.so imports (nm -D, undefined): " + ", ".join(green))
    got, _ = sk.import_kernel(ctx, "0.3.5", torch, "12.3")
    if got is not None:
        name = abi.symbol(got[1])
        old, new = stub.driver_api(ctx, "12.3"), stub.driver_api(ctx, "12.4")
        ctx.note(f"{name}: in CUDA 12.3's cuda.h: {name in old}; in 12.4's: {name in new}; cuGreenCtxStreamCreate in "
                 f"12.3: {'cuGreenCtxStreamCreate' in old}, in 12.4: {'cuGreenCtxStreamCreate' in new}")
    ctx.expect_error(abi.raise_again, got)


def fix_1(ctx):
    ctx.skip("nvidia-smi's 'CUDA Version' needs an NVIDIA driver; this machine has none (the stub stands in for "
             "the driver's exports only)")


def fix_2(ctx):
    torch = sk.pins(ctx, "0.5.1")["torch"]
    got, _ = sk.import_kernel(ctx, "0.3.5", torch, "12.4")
    ctx.call(abi.raise_again, got)
    ctx.note("the same wheel and torch import once the driver exports CUDA 12.4's driver API (stub of 12.4)")


def fix_3(ctx):
    pair = sk.pins(ctx, "0.5.3")
    root = abi.unpacked(ctx, "sgl-kernel", pair["sgl-kernel"])
    names = stub.undefined(sk.common_ops(root, pair["sgl-kernel"]))
    ctx.note(f"sgl-kernel {pair['sgl-kernel']} sm100/common_ops.abi3.so imports {len(names)} driver functions: "
             + ", ".join(names))
    got, _ = sk.import_kernel(ctx, pair["sgl-kernel"], pair["torch"], "12.3")
    ctx.call(abi.raise_again, got)
    ctx.note("sglang 0.5.3's pinned pair imports with the CUDA 12.3 driver; the fix's `pip install -U sglang` "
             "(today's release and its pins) was not run")


def fix_4(ctx):
    ctx.skip("about cuBLAS or CUDA runtime names found in an older toolkit's lib64 first; the record has no "
             "concrete case of it (its caveat says so)")
