"""xFormers 0.0.16's small-k kernel with a full [B, M, N] tensor bias: "Expected attn_bias.stride(1) == 0
to be true, but got false."

Python 3.10.13 (pyenv; 0.0.16's wheels stop at cp310), PyPI's torch 1.13.1 (the torch 0.0.16 was built
for) and numpy<2, xformers 0.0.16's cp310 wheel from PyPI (`--no-deps --target`); its _C loads next to
that torch (the notes say so). The small-k operator is 0.0.16's only kernel with a CPU implementation
(xformers/csrc/attention/cpu/attention.cpp), and the only one that took a tensor bias, so float32 CPU
tensors of head dim 16 route to it through the default dispatch, as the record says; the TORCH_CHECK is
in the CPU file as in the CUDA one.

Reproduce: memory_efficient_attention(q, k, v, attn_bias=<[B, M, N] tensor>) raises the record's
message. Fix 2: the same call with a [B, 1, N] bias expanded to [B, M, N] runs and matches an fp32
reference. Fix 1 (xformers 0.0.17 or newer) moves a full bias to the CUTLASS kernel, which is CUDA only:
on a CPU the dispatcher finds no operator, so it needs a GPU. Fix 3 is diffusers' SDPA processor on a
pipeline: not run."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 2400

CALL = """
import torch, xformers, xformers.ops as xops
print('xformers', xformers.__version__, 'torch', torch.__version__, '_C loaded:', xformers._has_cpp_library, flush=True)
torch.manual_seed(0)
B, M, N, K = 2, 8, 8, 16
q, k, v = torch.randn(B, M, K), torch.randn(B, N, K), torch.randn(B, N, K)
keep = torch.ones(B, N, dtype=torch.bool)
keep[:, -2:] = False
{bias}
out = xops.memory_efficient_attention(q, k, v, attn_bias=bias)
ref = torch.softmax((q.double() @ k.double().transpose(1, 2)) / K ** 0.5 + bias.double(), -1) @ v.double()
print('max_abs_error', (out.double() - ref).abs().max().item(), flush=True)
"""
FULL = """bias = torch.zeros(B, M, N)
bias.masked_fill_(~keep[:, None, :], float('-inf'))
print('bias stride', bias.stride(), flush=True)"""
# fix 2 as the record writes it
EXPANDED = """bias = torch.zeros(B, 1, N, dtype=q.dtype)
bias.masked_fill_(~keep[:, None, :], float('-inf'))
bias = bias.expand(B, M, N)
print('bias stride', bias.stride(), flush=True)"""


def install(ctx) -> tuple[_venv.Venv, str]:
    env, folder = b.torch_1_13_py310(ctx), b.xformers_0_0_16(ctx)
    ctx.note("xformers 0.0.16 (PyPI cp310 wheel, --no-deps --target) on Python 3.10")
    return env, str(folder)


def attention(ctx, bias: str) -> _venv.Run:
    env, folder = install(ctx)
    res = b.run_with_torch(ctx, CALL.format(bias=bias), env=env, path=[folder])
    ctx.note(" | ".join(ln for ln in res.output.splitlines() if ln.startswith(("xformers", "bias", "max_abs")))
             + f"; {_venv.last_exception(res.output, 240)}")
    return res


def reproduce(ctx):
    res = attention(ctx, FULL)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    ctx.skip("from 0.0.17 a full bias goes to the CUTLASS kernel, which runs on CUDA only (on a CPU the "
             "dispatcher finds no operator): needs a GPU")


def fix_2(ctx):
    res = attention(ctx, EXPANDED)
    ctx.call(_venv.finished, res, "max_abs_error", "the call with the expanded [B, 1, N] bias")
    ctx.call(_venv.within, ctx, res, "max_abs_error", "output against the fp64 reference", 1e-5)


def fix_3(ctx):
    ctx.skip("diffusers' AttnProcessor2_0 on a pipeline (PyTorch SDPA, not xformers): not run here")
