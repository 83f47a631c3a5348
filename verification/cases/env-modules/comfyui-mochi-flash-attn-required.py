"""The first ComfyUI-MochiWrapper (kijai, commit b80cb4a, 2024-10-23) runs Mochi's asymmetric attention
only through flash-attn; without it the attention raises NotImplementedError('Flash attention is
currently required.').

Environment: with_cpu_torch() (torch 2.13.0+cpu) with einops (pip --target; the module imports it), no
flash-attn. kijai/ComfyUI-MochiWrapper at b80cb4a and 00a550e (2024-10-24, the loader's attention_mode
choice), exported from a local clone by verification/cases/_downstream.py (nothing of it is committed
here), with the repository's root on PYTHONPATH so that mochi_preview/dit/joint_model/asymm_models_joint.py
imports as a package module without the wrapper's ComfyUI node files. A child builds one
AsymmetricAttention layer (visual width 64, text width 32, 2 heads, qk_norm on, which Mochi asserts) and calls its run_attention(), the
method every MochiSampler step reaches, on a packed qkv of 8 visual and 4 text tokens (all valid; one
sequence), in fp32 on the CPU.

Reproduce: at b80cb4a the call raises the record's NotImplementedError. Fix 1: at 00a550e the same layer
made with attention_mode='sdpa' (what the loader node passes on) runs, and its visual and text outputs
match the same projections of an fp32 softmax attention over the 12 tokens. Fix 2 (a flash-attn wheel
for ComfyUI's torch) needs a GPU: skipped."""

import os

from verification.cases import _builds as b
from verification.cases import _downstream, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
REPO = "kijai/ComfyUI-MochiWrapper"
FIRST = "b80cb4a"
FIXED = "00a550e"

CHILD = r'''
import sys, torch
from mochi_preview.dit.joint_model import asymm_models_joint as amj
print("ERRKB-FLAGS", amj.FLASH_ATTN_IS_AVAILABLE, flush=True)
kw = {"attention_mode": sys.argv[1]} if sys.argv[1] != "-" else {}
torch.manual_seed(0)
layer = amj.AsymmetricAttention(dim_x=64, dim_y=32, num_heads=2, qk_norm=True, **kw).eval()  # Mochi asserts qk_norm
N, L, heads, d = 8, 4, 2, 32
qkv = torch.randn(N + L, 3, heads, d)
with torch.no_grad():
    x, y = layer.run_attention(qkv, B=1, L=L, M=N, cu_seqlens=torch.tensor([0, N + L], dtype=torch.int32),
                               max_seqlen_in_batch=N + L, valid_token_indices=torch.arange(N + L))
    q, k, v = (qkv[:, i].transpose(0, 1) for i in range(3))           # (heads, tokens, d)
    out = (torch.softmax(q @ k.transpose(-1, -2) / d ** 0.5, -1) @ v).transpose(0, 1).reshape(N + L, heads * d)
    x_ref, y_ref = layer.proj_x(out[:N].unsqueeze(0)), layer.proj_y(out[N:].unsqueeze(0))
err = max((x - x_ref).abs().max().item(), (y - y_ref).abs().max().item())
print("ERRKB-MAXERR", err, tuple(x.shape), tuple(y.shape), flush=True)
'''


def _run(ctx, commit: str, mode: str) -> _venv.Run:
    env = b.with_cpu_torch(ctx)
    root = _downstream.tree(ctx, REPO, commit, ("mochi_preview",))
    einops = b.target_dir(ctx, "einops", no_deps=True, env=env)
    res = _venv.run([env.python, "-c", CHILD, mode], cwd=_venv._tmp_root(), timeout=300,
                    env=_venv.tool_env(VIRTUAL_ENV=str(env.path), PYTHONPATH=os.pathsep.join([str(root), einops])))
    flags = next((line for line in res.output.splitlines() if line.startswith("ERRKB-FLAGS")), "ERRKB-FLAGS ?")
    ctx.note(f"{commit}, attention_mode {mode!r}: FLASH_ATTN_IS_AVAILABLE {flags.split()[1]}; "
             + _venv.last_exception(res.output, 200))
    return res


def reproduce(ctx):
    res = _run(ctx, FIRST, "-")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    res = _run(ctx, FIXED, "sdpa")
    line = ctx.call(_venv.printed, res, "ERRKB-MAXERR")
    ctx.note(line.replace("ERRKB-MAXERR", "max error, x and y shapes:"))
    ctx.close([float(line.split()[1])], [0.0], atol=1e-5, what="run_attention with SDPA against an fp32 reference")


def fix_2(ctx):
    ctx.skip("installs a flash-attn wheel built for ComfyUI's torch, CUDA and Python and runs it on a GPU")
