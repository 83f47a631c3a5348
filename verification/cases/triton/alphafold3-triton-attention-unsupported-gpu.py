"""AlphaFold 3 v3.0.0's dot_product_attention(..., implementation='triton') raises ValueError
"implementation='triton' is unsupported on this GPU generation." when has_triton_support() is False:
JAX's default backend is not 'gpu' (as here: jax[cuda12] installed, no GPU, so JAX runs on its CPU
backend) or the first device is below compute capability 8.0.

AlphaFold 3 is not on PyPI: src/alphafold3/jax/attention and src/alphafold3/jax/common (plus the package's
__init__.py) are exported at v3.0.0 (4f52a3b) from a local clone (verification/cases/_downstream.py) and put
on PYTHONPATH of a uv environment holding what its pyproject.toml pins for these modules, jax[cuda12]==0.4.34,
jax-triton==0.2.0 and triton==3.1.0, with jaxtyping 0.2.36, typeguard 2.13.3 (unpinned there; releases of
that time), numpy<2 and setuptools. q, k, v: (1, 16, 4, 32) fp32, [batch, seq, heads, dim].

reproduce: implementation='triton' on this machine (JAX's backend: cpu).
fix_1: implementation='xla' (what --flash_attention_implementation=xla selects): runs and matches the fp32
reference. (The XLA_FLAGS line of the fix concerns a GPU compile and is not exercised here.)
fix_2: a GPU that JAX sees: skipped, no GPU here.
control: implementation=None (AlphaFold's automatic choice) falls back to XLA and matches the reference."""

from pathlib import Path

from verification.cases import _builds as b
from verification.cases import _downstream as ds
from verification.cases import _venv

BACKEND = "triton"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
REPO, COMMIT = "google-deepmind/alphafold3", "4f52a3bb624fd7245fb1ad0bf62d752ffa46f0ce"  # v3.0.0
PATHS = ("src/alphafold3/__init__.py", "src/alphafold3/jax/attention", "src/alphafold3/jax/common")
PINS = ("jax[cuda12]==0.4.34", "jax-triton==0.2.0", "triton==3.1.0", "jaxtyping==0.2.36", "typeguard==2.13.3",
        "numpy<2", "setuptools")
MARK = "ERRKB-AF3 "
ROOT = Path(__file__).resolve().parents[3]  # errkb's reference attention, imported by the child

CHILD = r'''
import json, sys
import numpy as np
import jax, jax.numpy as jnp
from alphafold3.jax.attention import attention
IMPL = None if sys.argv[1] == "none" else sys.argv[1]
rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal((1, 16, 4, 32)).astype(np.float32) for _ in range(3))
res = {"jax": jax.__version__, "backend": jax.default_backend(), "raised": None}
try:
    out = attention.dot_product_attention(jnp.asarray(q), jnp.asarray(k), jnp.asarray(v), implementation=IMPL)
    import torch
    from errkb.verify.reference import attention as reference
    res["out"] = np.asarray(out).tolist()
    res["ref"] = reference(*(torch.from_numpy(x) for x in (q, k, v)), layout="bshd").tolist()
except Exception as e:
    res["raised"] = [type(e).__name__, str(e)]
print(%r + json.dumps(res))
''' % MARK


def _run(ctx, impl: str) -> dict:
    src = ds.tree(ctx, REPO, COMMIT, PATHS) / "src"
    _, env = b.uv_env(ctx, "alphafold3-v3.0.0-jax", *PINS, *b.cpu_torch_requirement())
    res = _venv.run([env.python, "-c", CHILD, impl],
                    env=_venv.tool_env(VIRTUAL_ENV=str(env.path), PYTHONPATH=f"{src}:{ROOT}"), timeout=600)
    got = _venv.reported(res, MARK)
    ctx.note(f"jax {got['jax']}, default backend {got['backend']!r}, implementation={impl}")
    return got



def _matches(ctx, impl: str) -> None:
    got = _run(ctx, impl)
    ctx.call(_venv.raise_reported, got)
    ctx.close(got["out"], got["ref"], atol=1e-5, rtol=1e-5)


def reproduce(ctx):
    ctx.expect_error(_venv.raise_reported, _run(ctx, "triton"))


def fix_1(ctx):
    _matches(ctx, "xla")


def fix_2(ctx):
    ctx.skip("needs an Ampere-or-newer GPU that JAX sees (a CUDA jaxlib on a GPU machine); none here")


def control(ctx):
    _matches(ctx, "none")
