"""A kernel missing from the install: "operator wasn't built - see `python -m xformers.info` for
more info" in its block of the dispatcher's refusal.

On this CPU-only machine the line appears when xFormers' C++ extension did not load: xformers
0.0.28.post3 next to torch 2.13.0+cpu (built for 2.5.1+cu121, so the import warns "can't load
C++/CUDA extensions"). With a CPU-only torch (torch.version.cuda is None) the dispatcher lists the
ROCm kernels, and ckF's block says it was not built. It also appears for a kernel a release leaves
out on purpose (0.0.24's tritonflashattF). Where every listed kernel is built (0.0.28.post3 with
torch 2.5.1) no block says so and the step is skipped. Fix 1 (`python -m xformers.info`) runs and
must list the refused kernel as unavailable; fix 2 (install flash-attn for fa2F) needs a CUDA
build: skipped."""

import re

from verification.cases.xformers._xf import child, cpp_loaded, cpu_qkv, mea

BACKEND = "xformers"
REQUIRES = {"packages": ["torch", "xformers.ops"]}
TIMEOUT = 240


def _refused_unbuilt(ctx) -> list[str]:
    try:
        mea(*cpu_qkv(ctx))
    except NotImplementedError as exc:
        blocks = re.split(r"^(?=`[^`]+` is not supported because:)", str(exc), flags=re.M)
        return [re.match(r"`([^`]+)`", b).group(1) for b in blocks[1:] if "wasn't built" in b]
    return []


def reproduce(ctx):
    unbuilt = _refused_unbuilt(ctx)
    ctx.note(f"C++ extension loaded: {cpp_loaded()}; kernels saying they weren't built: {unbuilt}")
    if not unbuilt:
        ctx.skip("every kernel of this install's list is built (the extension loaded), so no block says otherwise")
    ctx.expect_error(mea, *cpu_qkv(ctx))


def fix_1(ctx):
    unbuilt = _refused_unbuilt(ctx)
    if not unbuilt:
        ctx.skip("no kernel of the refusal says it wasn't built here")
    info = child(["-m", "xformers.info"])
    listed = {m.group(1): m.group(2) for m in re.finditer(r"^memory_efficient_attention\.(\S+):\s+(\S+)", info.stdout, re.M)}
    ctx.note("unbuilt in the refusal: " + ", ".join(unbuilt) + "; xformers.info says: "
             + ", ".join(f"{k}={listed.get(k)}" for k in unbuilt))
    ctx.close([int(listed.get(k) == "unavailable") for k in unbuilt], [1] * len(unbuilt), atol=0,
              what="unbuilt kernels listed as unavailable by xformers.info")


def fix_2(ctx):
    ctx.skip("FA2 kernels for fa2F come from a CUDA flash-attn build (and a GPU to use them)")
