"""Older FlashAttention-4 code for a child process: a released wheel (unpacked once per worker) or
a source tree exported from the flash-attention repository, put on the path ahead of the installed
`flash_attn.cute`, so two releases never meet in one process.

Releases before 4.0.0b5 do not import under the payload's CuTe DSL 4.8 (`cutlass.cute.core` has no
`ThrMma` there); with `old_dsl=True` the child gets the DSL and quack of their time instead
(nvidia-cutlass-dsl 4.4.1, quack-kernels 0.2.10). Where they come from:
verification/device/fa4-old-releases.sh (ERRKB_FA4_RELEASES, default .gpu/fa4old, carried with the
call; ERRKB_CUTE_DSL_OLD, the unpacked 4.4.1 DSL's python_packages folder on the device)."""

from __future__ import annotations

import os
import zipfile

from verification.cases import _child, _venv

OLD_QUACK = "quack-0.2.10"


def _releases() -> str:
    return os.path.abspath(os.environ.get("ERRKB_FA4_RELEASES", ".gpu/fa4old"))


def _old_dsl() -> str:
    return os.environ.get("ERRKB_CUTE_DSL_OLD", "/root/cdsl441/nvidia_cutlass_dsl/python_packages")


def _code(release: str) -> str:
    """The folder holding `flash_attn/cute` of `release`: a source tree's folder, or its wheel unpacked."""
    tree = os.path.join(_releases(), release)
    if os.path.isdir(tree):
        return tree
    wheel = os.path.join(_releases(), f"flash_attn_4-{release}-py3-none-any.whl")
    if not os.path.isfile(wheel):
        raise RuntimeError(f"no FlashAttention-4 {release} in {_releases()} (see verification/device/fa4-old-releases.sh)")
    target = _venv._tmp_root() / f"fa4-{release}"
    if not target.exists():
        zipfile.ZipFile(wheel).extractall(target)
    return str(target)


def child_env(ctx, release: str, old_dsl: bool = False) -> dict:
    """The environment additions for a child that runs `release` (a wheel's version, or a source
    tree's folder name under the releases folder), on the installed DSL or, with `old_dsl`, on 4.4.1."""
    first = [_code(release)]
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if old_dsl:
        quack = os.path.join(_releases(), OLD_QUACK)
        for need in (_old_dsl(), quack):
            if not os.path.isdir(need):
                raise RuntimeError(f"missing {need} (see verification/device/fa4-old-releases.sh)")
        first += [_old_dsl(), quack]
        paths = [p for p in paths if not p.rstrip("/").endswith("dsl_packages")]  # the installed DSL's folder
    ctx.note(f"FlashAttention-4 {release}" + (" on nvidia-cutlass-dsl 4.4.1 and quack-kernels 0.2.10" if old_dsl else ""))
    return {"PYTHONPATH": os.pathsep.join(first + paths)}


# A child that runs one attention call forward and backward on random bf16 inputs and saves what
# grads_match reads. ATTENTION is the source of `def attention(q, k, v)` (bshd in, bshd out);
# FOCUS a regex picking the decisive part of a long diagnostic (None: its first 300 characters).
GRAD_CHILD = r'''
import re
import sys
import torch
import flash_attn.cute as cute_pkg

B, S, D, DV, FOCUS = SHAPE_AND_FOCUS
torch.manual_seed(0)
q, k = (torch.randn(B, S, 4, D, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(2))
v = torch.randn(B, S, 4, DV, device="cuda", dtype=torch.bfloat16, requires_grad=True)
do = torch.randn(B, S, 4, DV, device="cuda", dtype=torch.bfloat16)
print("errkb: flash_attn.cute from", cute_pkg.__file__, flush=True)
ATTENTION
try:
    out = attention(q, k, v)
    out.backward(do)
    torch.cuda.synchronize()
except Exception as exc:
    text = " ".join(str(exc).split())  # cutlass-dsl 4.8 wraps its diagnostics over several lines
    found = re.search(FOCUS, text) if FOCUS else None
    print(f"errkb: raised {type(exc).__module__}.{type(exc).__name__}", flush=True)
    print(f"{type(exc).__name__}: {found.group() if found else text[:300]}", flush=True)  # for the step to re-raise
    sys.exit(1)
torch.save({n: t.detach().float().cpu() for n, t in
            {"q": q, "k": k, "v": v, "do": do, "out": out, "dq": q.grad, "dk": k.grad, "dv": v.grad}.items()},
           sys.argv[1])
print("errkb: ran", flush=True)
'''


# attention() through the installed (or child-path) flash_attn.cute, as users call it
FLASH_ATTN_FUNC = r'''
def attention(q, k, v):
    from flash_attn.cute import flash_attn_func
    out = flash_attn_func(q, k, v)
    return out[0] if isinstance(out, tuple) else out
'''

# the same call through PyTorch's SDPA (its layout is (batch, heads, seqlen, dim)): the fix steps' baseline
SDPA_FUNC = r'''
def attention(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)
'''


def grad_child(attention: str, *, batch: int, seqlen: int, head_dim: int, head_dim_v: int | None = None,
               focus: str | None = None) -> str:
    """GRAD_CHILD for `attention` (source defining attention(q, k, v)) on (batch, seqlen, 4 heads)."""
    shape = repr((batch, seqlen, head_dim, head_dim_v or head_dim, focus))
    return GRAD_CHILD.replace("SHAPE_AND_FOCUS", shape).replace("ATTENTION", attention.strip("\n"))


def run(ctx, code: str, name: str, what: str, release: str | None = None, old_dsl: bool = False):
    """Run a case's child script on `release` (None: the installed one) and note what happened;
    returns (the run, what the child saved or None)."""
    env = child_env(ctx, release, old_dsl) if release else None
    res, saved = _child.run(ctx, code, name, env=env, timeout=600)
    ctx.note(f"{what}, {release or 'the installed release'}: "
             + (_venv.last_exception(res.output, 200) if saved is None else "ran")
             + f" ({_child.printed(res.output, 'errkb: flash_attn.cute from')})")
    return res, saved


def ran(ctx, res, saved):
    """What a claimed-good child saved; the exception it printed instead is raised (and refutes)."""
    if saved is None:
        ctx.call(_venv.reraise, res.output)
        raise RuntimeError(f"the child neither ran nor printed an exception: {res.tail(600)}")
    return saved


def grads_match(ctx, res, saved, tol: dict) -> None:
    """The output and q/k/v gradients a GRAD_CHILD saved match an fp32 reference computed here."""
    saved = ran(ctx, res, saved)
    t = ctx.torch
    q, k, v = (saved[n].to(ctx.device).requires_grad_() for n in ("q", "k", "v"))
    scores = t.einsum("bqhd,bkhd->bhqk", q, k) * q.shape[-1] ** -0.5
    ref = t.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), v)
    ref.backward(saved["do"].to(ctx.device))
    ctx.close(saved["out"].to(ctx.device), ref.detach(), **tol)
    for name, x in (("dq", q), ("dk", k), ("dv", v)):
        ctx.close(saved[name].to(ctx.device), x.grad, **tol)
