"""flash-attn 2.1.1 and older import the separate rotary_emb extension at the top of
flash_attn/layers/rotary.py: "No module named 'rotary_emb'" when it was not built.

Environment: PyPI's torch 2.5.1 (with its triton 3.1.0; uv, from its cache); flash-attn 2.1.1 and 2.8.3
as wheels built from their PyPI sdists with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE (the Python package
only), each installed with pip --target, and einops. Both import their compiled flash_attn_2_cuda in
flash_attn/__init__.py, so in the child processes that module is replaced by an errkb stand-in when it
does not import (importing works, calling it raises; nothing here calls it). rotary_emb is never stood
in: whether the layer imports it is what is under test.

Reproduce: `import flash_attn.layers.rotary` with 2.1.1. Fix 1 (a current release): the same import
with 2.8.3 works without rotary_emb (its rotary layer imports the Triton kernel; no kernel is run).
Fix 2 (transformers 4.54+): transformers 4.51-4.53 import the rotary layer only when
is_flash_attn_2_available() is true, which needs a CUDA or ROCm device; not decidable on this machine
without pretending one. Control: `import flash_attn` of 2.1.1 works (the error is the rotary layer's)."""


from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
STANDIN = _venv.standin_preamble("flash_attn_2_cuda")
ROTARY = "import flash_attn.layers.rotary as r\nprint('IMPORTED', r.__file__, flush=True)\n"


def _run(ctx, version: str, code: str) -> _venv.Run:
    env = b.cuda_torch_env(ctx)
    wheel = b.flash_attn_python_wheel(ctx, version, env=env)
    path = [b.target_dir(ctx, wheel, no_deps=True, env=env), b.target_dir(ctx, "einops==0.8.1", env=env)]
    res = b.run_with_torch(ctx, STANDIN + "import flash_attn\nprint('VERSION', flash_attn.__version__, flush=True)\n" + code,
                           path=path, env=env)
    ctx.note(f"flash-attn {version}" + (" (flash_attn_2_cuda stood in)" if "STANDIN flash_attn_2_cuda" in res.output else "")
             + f": `{code.splitlines()[0]}`: " + (_venv.last_exception(res.output, 240) if res.returncode else "ok"))
    if f"VERSION {version}" not in res.output:
        raise RuntimeError(f"flash-attn {version} did not import: {res.tail(600)}")
    return res


def reproduce(ctx):
    res = _run(ctx, "2.1.1", ROTARY)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    res = _run(ctx, "2.8.3", ROTARY)
    ctx.call(_venv.finished, res, "IMPORTED", "the import")


def fix_2(ctx):
    ctx.skip("transformers 4.51-4.53 import flash_attn.layers.rotary only when is_flash_attn_2_available() is true, "
             "which asks for a CUDA or ROCm device; none here, and pretending one would fake the check")


def control(ctx):
    res = _run(ctx, "2.1.1", "print('PACKAGE', flush=True)\n")
    ctx.call(_venv.finished, res, "PACKAGE", "import flash_attn (2.1.1)")
