"""Triton 3.4.0 compiling flash-linear-attention's GatedDeltaNet backward kernel for Blackwell
(sm100) stops in its TritonGPUHoistTMEMAlloc pass: 'Failed to hoist tmem_store', then
'UNREACHABLE executed at /project/lib/Dialect/TritonGPU/Transforms/HoistTMEMAlloc.cpp:418!' on
stderr, and RuntimeError('PassManager::run failed').

No GPU is needed: the kernel is compiled for an explicit target in a child process (_compile.py) of
a uv environment holding only that Triton wheel. The kernel is FLA's own,
chunk_gated_delta_rule_bwd_kernel_dhu_blockdim64, read at run time from the flash-linear-attention
fla-core 0.3.2 wheel (FLA's kernels package, which flash-linear-attention 0.3.2 depends on;
downloaded into the cache, not installed: it imports torch and queries the GPU) and written to a temporary file with three names it imports from FLA's helpers defined in a
few lines of our own (exp = tl.exp, no CUDA graphs, no autotune cache). Arguments are those of
GatedDeltaNet's backward with a gate, no initial state and fixed-length sequences (bf16 tensors,
fp32 gate), head dim 128, BV 64. Nothing runs."""

import os
import re
import tempfile
import zipfile

from verification.cases import _builds as b
from verification.cases import _venv
from verification.cases.triton._compile import compile_for, compiled, triton_env

BACKEND = "triton"
REQUIRES = {"cuda": False}
TIMEOUT = 900

OLD = "3.4.0"  # torch 2.8.0's Triton
NEW = "3.5.1"  # 3.6.0 and 3.8.0 compile it too (seen while writing the record)
FLA = "0.3.2"
NAME = "chunk_gated_delta_rule_bwd_kernel_dhu_blockdim64"
SIG = {"q": "*bf16", "k": "*bf16", "w": "*bf16", "g": "*fp32", "do": "*bf16", "dh": "*bf16", "dv": "*bf16",
       "dv2": "*bf16", "scale": "fp32", "T": "i32"}
CONSTS = {"dht": None, "dh0": None, "cu_seqlens": None, "chunk_offsets": None, "H": 4, "K": 128, "V": 128, "BT": 64,
          "BV": 64, "USE_G": True, "USE_INITIAL_STATE": False, "USE_FINAL_STATE_GRADIENT": False, "IS_VARLEN": False}
HEADER = ("import triton\nimport triton.language as tl\n\n"
          "exp = tl.exp  # what fla.ops.utils.op gives without FLA_USE_FAST_OPS\n"
          "use_cuda_graph = False\nautotune_cache_kwargs = {}\n\n\n")


def _kernel_file(ctx) -> str:
    """FLA's kernel (its decorators and def, up to the next top-level def) from the released wheel."""
    folder = _venv.cache_dir() / "wheels"
    found = sorted(folder.glob(f"fla_core-{FLA}-*.whl"))
    if not found:
        env = _venv.venv(ctx, "fresh-" + b.PIP, pip=b.PIP)
        env.pip("download", "--no-deps", "--only-binary", ":all:", f"fla-core=={FLA}", "-d", folder, timeout=600)
        found = sorted(folder.glob(f"fla_core-{FLA}-*.whl"))
        if not found:
            ctx.skip(f"could not download fla-core {FLA}")
    with zipfile.ZipFile(found[0]) as z:
        source = z.read("fla/ops/common/chunk_delta_h.py").decode()
    m = re.search(r"\n((?:@triton\.[^\n]*\n(?:[ )\]}][^\n]*\n)*)+def " + NAME + r"\(.*?)(?=\ndef |\Z)", source, re.S)
    if m is None:
        raise RuntimeError(f"{NAME} not found in fla-core {FLA}")
    path = os.path.join(tempfile.mkdtemp(prefix="errkb-fla-"), "fla_chunk_delta_h_bwd.py")
    with open(path, "w") as f:
        f.write(HEADER + m.group(1))
    ctx.note(f"{NAME} read from the fla-core {FLA} wheel")
    return path


def _compile(ctx, version: str, cc: int) -> dict:
    env = triton_env(ctx, version)
    return compile_for(ctx, _kernel_file(ctx), NAME, SIG, CONSTS, cc, python=env.python,
                       env=_venv.tool_env(VIRTUAL_ENV=str(env.path)), timeout=600)


def _clean(ctx, result, what):
    compiled(ctx, result, what)
    if _venv.tool_message(result.get("stderr", ""), ctx.record["template"]):
        from errkb.verify.case import Refuted

        raise Refuted(f"{what}: compiled, but the record's line is on stderr")


def reproduce(ctx):
    result = _compile(ctx, OLD, 100)
    ctx.note(f"for sm100 with Triton {OLD}: " + ("compiled" if result.get("ok") else
             "raised " + "; ".join(f"{c['class']}: {c['message'][:120]}" for c in result.get("chain", [])))
             + ("; stderr holds 'Failed to hoist tmem_store'" if "Failed to hoist tmem_store" in result.get("stderr", "") else ""))
    ctx.expect_error(_venv.raise_tool_message, "LLVM", result.get("stderr", ""), ctx.record["template"])


def fix_1(ctx):
    # A newer Triton: the same kernel compiles for sm100.
    _clean(ctx, _compile(ctx, NEW, 100), f"{NAME} for sm100 with Triton {NEW}")


def fix_2(ctx):
    # A Hopper target: the pass does not run below compute capability 10.0.
    _clean(ctx, _compile(ctx, OLD, 90), f"{NAME} for sm90 with Triton {OLD}")
