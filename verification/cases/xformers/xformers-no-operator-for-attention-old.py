"""xformers 0.0.13's dispatcher: "No operator found for this attention: AttentionOpDispatch(...)", on the CPU.

Python 3.8.18 (pyenv; 0.0.13's only wheel on PyPI is cp38) with PyPI's torch 1.12.1 (its CUDA 10.2 build,
the release 0.0.13 asks for at least), numpy<2, pyre-extensions 0.0.23 (0.0.13's pin) and xformers
0.0.13's cp38 wheel, in a virtual environment of its own. The wheel's _C.so was built against a CUDA 11
torch (it needs libtorch_cuda_cu.so and libcudart.so.11.0), so it does not load here; xformers 0.0.13
prints that and goes on, and the dispatcher (`AttentionOpDispatch.op` in xformers/ops.py) is plain Python
that asks each operator's `supports()` before any kernel runs.

Reproduce: `memory_efficient_attention(q, q, q)` on fp32 CPU tensors of head dim 64 raises the record's
NotImplementedError. Every operator refuses, and the notes list why from their own attributes: the
FlashAttention and generic CUTLASS-style forward operators by device (CUDA only: a reason about the
device, not about the GPU a user has), the small-k operator (CPU and CUDA, fp32) by head dim (64 > 32).
Fix 1 (half precision) is a GPU fix: xformers 0.0.13's fp16/bf16 operators are CUDA ones; fix 2 names no
command (upgrade, or turn xformers off): both skipped."""

from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
INSTALL = ["torch==1.12.1", "numpy<2", "pyre-extensions==0.0.23", "--only-binary=xformers", "xformers==0.0.13"]
CODE = """
import torch, xformers, xformers.ops as xops
print('versions torch', torch.__version__, 'xformers', xformers.__version__, flush=True)
ops = (xops.MemoryEfficientAttentionFlashAttentionOp, xops.MemoryEfficientAttentionGenericForwardOp,
       xops.MemoryEfficientAttentionOp)
q = torch.randn(1, 16, 64)  # (batch, seqlen, head_dim), float32 on the CPU
d = xops.AttentionOpDispatch.from_arguments(q, q, q)
for op in ops:
    print('op', op.__name__, 'devices', sorted(op.SUPPORTED_DEVICES), 'dtypes', sorted(map(str, op.SUPPORTED_DTYPES)),
          'max k', op.SUPPORTED_MAX_K, 'supports', op.supports(d), flush=True)
xops.memory_efficient_attention(q, q, q)
print('returned', flush=True)
"""


def reproduce(ctx):
    env = _venv.noted(ctx, _venv.venv(ctx, "py38-torch-1.12.1-xformers-0.0.13", python="3.8", install=INSTALL,
                                      timeout=1800))
    res = env.python_run(CODE)
    lines = res.output.splitlines()
    ctx.note(" | ".join(ln for ln in lines if ln.startswith(("versions", "op "))))
    ctx.note("compiled extension: " + next((ln.strip() for ln in lines if "libtorch_cuda_cu" in ln or "libcudart" in ln
                                             or "_C" in ln and "Error" in ln), "no load error printed"))
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    ctx.skip("xformers 0.0.13's fp16/bf16 operators are CUDA-only: half precision on a GPU is not run on this CPU")


def fix_2(ctx):
    ctx.skip("the fix names no command (upgrade xformers with a matching torch, or turn xformers off in the application)")
