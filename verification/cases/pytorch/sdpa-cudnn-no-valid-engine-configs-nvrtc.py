"""SDPA on the cuDNN backend in a process where NVRTC cannot be opened: cuDNN's heuristics find no
engine for the attention graph and torch raises "cuDNN Frontend error: ... No valid engine configs
for <graph>".

NVRTC is made unloadable the way a missing library is: a small preloaded library (compiled here
with the machine's C compiler) answers every dlopen of a file named libnvrtc* with "not found",
and passes every other dlopen through. Each step runs SDPA in a child process (bf16, (2, 4, 128,
64), SDPBackend.CUDNN_ATTENTION forced, or cuDNN switched off for the second fix and the control), which saves its output; the step compares it with the
fp32 reference. The child also says whether a libnvrtc was mapped anyway (then the trick did not
take and the step is skipped, not judged)."""

import os

from verification.cases import _child as _child_process
from verification.cases import _venv
from verification.cases._common import TOL, ref_attention

REQUIRES = {"cuda": True, "arch": "sm80+", "torch": ">=2.5"}
TIMEOUT = 300

HIDE_NVRTC_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <stddef.h>
void *dlopen(const char *file, int mode) {
  static void *(*next)(const char *, int) = NULL;
  if (!next) next = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
  if (file) {
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    if (strncmp(base, "libnvrtc", 8) == 0) return NULL;
  }
  return next(file, mode);
}
"""

CHILD = r"""
import sys, torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
torch.manual_seed(0)
q, k, v = (torch.randn(2, 4, 128, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
try:
    if {disable_cudnn}:  # the fix: cuDNN out of SDPA's choice, torch picks among the others
        torch.backends.cuda.enable_cudnn_sdp(False)
        out = F.scaled_dot_product_attention(q, k, v)
    else:
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            out = F.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
    torch.save({{"q": q.cpu(), "k": k.cpu(), "v": v.cpu(), "out": out.cpu()}}, sys.argv[1])
    print("errkb: sdpa ran")
finally:
    mapped = sorted({{line.split()[-1] for line in open("/proc/self/maps") if "libnvrtc" in line.split()[-1]}})
    print("errkb: nvrtc mapped:", mapped or "none")
"""


def _shim(ctx):
    lib = _venv._tmp_root() / "libhide_nvrtc.so"
    if not lib.exists():
        src = lib.with_suffix(".c")
        src.write_text(HIDE_NVRTC_C)
        built = _venv.run(["cc", "-shared", "-fPIC", "-O2", "-o", lib, src, "-ldl"], timeout=120)
        if built.returncode != 0:
            ctx.skip(f"no C compiler to build the dlopen filter: {built.tail(300)}")
    return lib


def _child(ctx, *, hide: bool, disable_cudnn: bool = False):
    """Run the SDPA child; return (its output, its saved tensors or None)."""
    env = {"LD_PRELOAD": " ".join(filter(None, [str(_shim(ctx)), os.environ.get("LD_PRELOAD")]))} if hide else {}
    name = f"sdpa-{'hidden' if hide else 'plain'}-{int(disable_cudnn)}"
    res, saved = _child_process.run(ctx, CHILD.format(disable_cudnn=disable_cudnn), name, env=env)
    mapped = _child_process.printed(res.output, "errkb: nvrtc mapped:") or "?"
    ctx.note(("NVRTC hidden" if hide else "NVRTC loadable") + (", cuDNN SDPA off" if disable_cudnn else "")
             + f": nvrtc mapped: {mapped}; {_venv.last_exception(res.output, 300) if res.returncode else 'ran'}")
    if hide and mapped != "none":
        ctx.skip("a libnvrtc was mapped although dlopen of it was refused: this process did not lose NVRTC")
    return res.output, saved


def _matches(ctx, result):
    output, saved = result
    if saved is None:
        ctx.call(_venv.reraise, output)  # refuted with the child's exception, if it printed one
        raise RuntimeError(f"the SDPA child neither ran nor printed an exception: {output[-800:]}")
    ctx.close(saved["out"], ref_attention(saved["q"], saved["k"], saved["v"], layout="bhsd"), **TOL)


def reproduce(ctx):
    output, _ = _child(ctx, hide=True)
    ctx.note("the child's last lines: " + " | ".join(output.strip().splitlines()[-6:])[-900:])
    ctx.expect_error(_venv.reraise, output, ctx.record["template"])


def fix_1(ctx):
    # NVRTC loadable again: the same call in a process without the filter
    _matches(ctx, _child(ctx, hide=False))


def fix_2(ctx):
    # NVRTC still hidden, cuDNN taken out of SDPA's choice: torch picks another backend
    _matches(ctx, _child(ctx, hide=True, disable_cudnn=True))


def control(ctx):
    # the nearest valid call: the same SDPA on the default backend choice, NVRTC loadable
    _matches(ctx, _child(ctx, hide=False, disable_cudnn=True))
