"""flash-attn 2.8's Triton rotary kernel on torch 2.5: "module 'torch.library' has no attribute
'wrap_triton'".

flash-attn v2.8.3's Python files (git tag) next to PyPI's torch 2.5.1 and its Triton 3.1.0, the compiled
flash_attn_2_cuda stood in (verification/cases/_fa_torch25.py). Reproduce: `from flash_attn.layers.rotary
import apply_rotary_emb` imports (as the record says), and calling it on small CUDA tensors should raise
the record's AttributeError in flash_attn/ops/triton/rotary.py, where apply_rotary looks the helper up
inside `with torch.cuda.device(x.device.index)`, before the launch. It needs a GPU: with CPU tensors
torch 2.5.1 stops first in that `with` ("RuntimeError: invalid argument to exchangeDevice", seen on a
CPU machine, 2026-12-07), and the lent H200 has torch 2.11 only, which has wrap_triton; a GPU runner
that can install torch 2.5.1 runs it. The fixes (flash-attn 2.7.4.post1's direct launch, or torch 2.6+) launch the Triton kernel,
which needs a GPU, and fix 3 is transformers' SDPA path: not run here."""

from verification.cases import _fa_torch25 as fa
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
STEP_REQUIRES = {"reproduce": {"cuda": True}}
TIMEOUT = 1800

CALL = """
import torch
from flash_attn.layers.rotary import apply_rotary_emb
print('IMPORTED apply_rotary_emb', flush=True)
x = torch.randn(1, 4, 2, 32, device='cuda', dtype=torch.float16)
cos, sin = torch.randn(4, 16, device='cuda', dtype=torch.float16), torch.randn(4, 16, device='cuda', dtype=torch.float16)
apply_rotary_emb(x, cos, sin)
"""


def reproduce(ctx):
    res = fa.run(ctx, "v2.8.3", CALL)
    if "IMPORTED" not in res.output:
        raise RuntimeError(f"apply_rotary_emb did not import: {res.tail(600)}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    ctx.skip("flash-attn 2.7.4.post1 launches the Triton kernel directly: the launch needs a GPU")


def fix_2(ctx):
    ctx.skip("torch 2.6+ has torch.library.wrap_triton; the wrapped launch needs a GPU")


def fix_3(ctx):
    ctx.skip("transformers' SDPA path for Qwen2.5-VL: a model load, not run here")
