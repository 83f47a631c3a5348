"""flash-attn's Python files of a release, run in a child process next to PyPI's torch 2.5.1 (its CUDA
12.4 build, which brings Triton 3.1.0; it imports on a machine without a GPU).

The flash_attn/ folder comes from the release's git tag (`_downstream.tree` of a local clone of
Dao-AILab/flash-attention, ERRKB_VERIFY_GIT); flash_attn/__init__.py imports the compiled
flash_attn_2_cuda, which is not built here, so the child puts an errkb stand-in in its place
(errkb.verify.standin: importing works, calling into it raises StandInReached, never a verdict) and
prints STANDIN when it did. einops (flash-attn's one Python dependency) and setuptools (Triton 3.1.0
imports it; pip-made environments have it) are installed next to torch.
Used by the records whose failure is decided in Python before any kernel runs."""

from __future__ import annotations


from verification.cases import _builds as b
from verification.cases import _downstream
from verification.cases import _venv

TORCH = "torch==2.5.1"
STANDIN = _venv.standin_preamble("flash_attn_2_cuda")


def env(ctx) -> _venv.Venv:
    _, venv = b.uv_env(ctx, "cuda-torch-2.5.1-einops", TORCH, "numpy", "einops==0.8.1", f"setuptools=={b.SETUPTOOLS}")
    return venv


def tree(ctx, tag: str) -> str:
    return str(_downstream.tree(ctx, "Dao-AILab/flash-attention", tag, ["flash_attn"]))


def run(ctx, tag: str, code: str) -> _venv.Run:
    """`code` after the stand-in snippet, by torch 2.5.1's Python with flash-attn `tag`'s tree first on the path."""
    venv = env(ctx)
    res = b.run_with_torch(ctx, STANDIN + code, env=venv, path=[tree(ctx, tag)])
    versions = venv.python_run("import torch, triton; print(torch.__version__, 'triton', triton.__version__)").output.strip()
    ctx.note(f"flash-attn {tag} (git tag's flash_attn/), torch {versions.splitlines()[-1] if versions else '?'}"
             + ("; flash_attn_2_cuda stood in" if "STANDIN" in res.output else "")
             + f"; {_venv.last_exception(res.output, 240)}")
    return res
