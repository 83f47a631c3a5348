"""flex_attention's FLASH backend with a causal BlockMask and GQA (40 query heads over 4 KV heads)
on SM90: flash_attn/cute from git main just before commit 4d9c722a (its parent, 9d871f9f) fails to
trace the forward kernel (UnboundLocalError for load_Q, wrapped by the CuTe DSL in a
DSLRuntimeError); the installed release and the 4.0.0b4 wheel run the same call, and so does
flex_attention's own Triton kernel. The source tree and b4 need the DSL of their time, so those
steps run in a child process (verification/cases/_fa4_releases.py)."""

from verification.cases import _fa4_releases, _venv

REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn.cute"]}
TIMEOUT = 900
TOL = {"atol": 2e-2, "rtol": 2e-2}
BROKEN_TREE = "main-9d871f9f"  # git archive 9d871f9f flash_attn/cute (Dao-AILab/flash-attention)

CHILD = r'''
import sys
import torch
import flash_attn.cute as cute_pkg
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

OPTIONS = KERNEL_OPTIONS
torch.manual_seed(0)
s, d = 512, 128
q = torch.randn(1, 40, s, d, device="cuda", dtype=torch.bfloat16)
k, v = (torch.randn(1, 4, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
mask = create_block_mask(lambda b, h, qi, ki: qi >= ki, 1, 1, s, s, device="cuda")
print("errkb: flash_attn.cute from", cute_pkg.__file__, flush=True)
try:
    out = torch.compile(flex_attention)(q, k, v, block_mask=mask, enable_gqa=True, kernel_options=OPTIONS)
    torch.cuda.synchronize()
except Exception as exc:
    chain = [exc]
    while chain[-1].__cause__ is not None and len(chain) < 5:
        chain.append(chain[-1].__cause__)
    for e in chain:  # the wrapper first, the cause last (what the step re-raises)
        print(f"{type(e).__name__}: {' '.join(str(e).split())[:400]}", flush=True)
    sys.exit(1)
torch.save({"q": q.float().cpu(), "k": k.float().cpu(), "v": v.float().cpu(), "out": out.float().cpu()}, sys.argv[1])
print("errkb: ran", flush=True)
'''


def _run(ctx, release=None, flash=True):
    code = CHILD.replace("KERNEL_OPTIONS", repr({"BACKEND": "FLASH"} if flash else None))
    return _fa4_releases.run(ctx, code, f"fa4-flex-gqa-{release}-{int(flash)}",
                             f"flex_attention {'FLASH' if flash else 'default'} backend",
                             release=release, old_dsl=True)


def _matches_reference(ctx, res, saved):
    saved = _fa4_releases.ran(ctx, res, saved)
    t = ctx.torch
    q, k, v = (saved[n].to(ctx.device) for n in ("q", "k", "v"))
    k, v = (x.repeat_interleave(q.shape[1] // x.shape[1], dim=1) for x in (k, v))
    scores = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
    causal = t.ones(q.shape[2], k.shape[2], dtype=t.bool, device=ctx.device).tril()
    ref = scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v
    ctx.close(saved["out"].to(ctx.device), ref, **TOL)


def reproduce(ctx):
    res, _ = _run(ctx, release=BROKEN_TREE)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    # a released wheel: the installed one (the payload's)
    _matches_reference(ctx, *_run(ctx))


def fix_3(ctx):
    # flex_attention's default (Triton) backend, no FA4 involved
    _matches_reference(ctx, *_run(ctx, flash=False))


def control(ctx):
    # the first wheel checked here, 4.0.0b4, on the same DSL as the broken tree
    _matches_reference(ctx, *_run(ctx, release="4.0.0b4"))
