"""`No module named 'vllm.vllm_flash_attn.layers'`: the vllm Python imports has a vllm_flash_attn
folder without the vendored rotary files.

On the CPU with real files: vLLM 0.9.2's PyPI wheel (verification/cases/_abi_wheels.py; its
compiled libraries are not loaded by these imports) stands for the installed package, on
PYTHONPATH of a uv environment with PyPI's torch 2.5.1 (which brings Triton 3.1.0), einops and setuptools (Triton 3.1 imports it).
The source tree is a copy of the wheel's vllm/ Python files whose vllm/vllm_flash_attn/ holds only
what vLLM 0.9.2's sdist ships there (.gitkeep, __init__.py, flash_attn_interface.py: read from the
sdist's file list), i.e. a checkout or unpacked sdist before the build that installs the vendored
FlashAttention files. The import is the one vLLM 0.9.x's rotary_embedding.py runs on CUDA
(`from vllm.vllm_flash_attn.layers.rotary import apply_rotary_emb`), run directly: on a CPU vLLM's
own module skips it.

reproduce: Python started inside that tree (the installed wheel still on PYTHONPATH behind it).
fix_1: the record's check prints the tree's folder without layers/ from inside it, and the
installed package's folder with layers/ from elsewhere.
fix_2: the release wheel's files alone import the helper.
fix_3: skipped (a CUDA build of vLLM).
fix_4: the same interpreter and PYTHONPATH as reproduce, started from another directory, import it."""

import shutil

from verification.cases import _abi_wheels as abi
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-modules"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
WHEEL = ("vllm", "0.9.2")
SDIST_FA_FILES = (".gitkeep", "__init__.py", "flash_attn_interface.py")  # vllm-0.9.2.tar.gz: vllm/vllm_flash_attn/
IMPORT = "    from vllm.vllm_flash_attn.layers.rotary import apply_rotary_emb\n    print('imported', apply_rotary_emb.__module__)"


def _env(ctx):
    _, env = b.uv_env(ctx, "cuda-torch-2.5.1-einops", "torch==2.5.1", "numpy", "einops", "setuptools")
    abi.torch_line(ctx, env)
    return env


def _installed(ctx):
    root = abi.unpacked(ctx, *WHEEL)
    fa = root / "vllm" / "vllm_flash_attn"
    ctx.note("the wheel's vllm/vllm_flash_attn: " + ", ".join(sorted(p.name for p in fa.iterdir())))
    return root


def _tree(ctx, installed):
    """vllm/ of the wheel, Python files only, with vllm_flash_attn/ as the 0.9.2 sdist ships it."""
    tree = _venv._tmp_root() / "vllm-0.9.2-source-tree"
    if not (tree / ".errkb-made").is_file():
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(installed / "vllm", tree / "vllm", ignore=shutil.ignore_patterns("*.so"))
        fa = tree / "vllm" / "vllm_flash_attn"
        for p in fa.iterdir():
            if p.name not in SDIST_FA_FILES:
                shutil.rmtree(p) if p.is_dir() else p.unlink()
        (tree / ".errkb-made").write_text("ok")
    ctx.note("source tree's vllm/vllm_flash_attn: " + ", ".join(sorted(p.name for p in (tree / "vllm" / "vllm_flash_attn").iterdir())))
    return tree


def _import(ctx, env, path, cwd):
    code = abi.PROBE.format(body=IMPORT, mark=abi.MARK)
    res = env.python_run(code, timeout=600, cwd=cwd, PYTHONPATH=str(path))
    line = next((l for l in res.output.splitlines() if l.startswith(abi.MARK)), None)
    if line is None:
        raise RuntimeError(f"the child printed no result: {res.tail(800)}")
    import json

    got = json.loads(line[len(abi.MARK):])
    ctx.note(f"cwd {cwd}: " + ("imported" if got is None else f"{got[0]}: {got[1]}"))
    return None if got is None else (got[0], got[1])


def reproduce(ctx):
    env = _env(ctx)
    installed = _installed(ctx)
    tree = _tree(ctx, installed)
    ctx.expect_error(abi.raise_again, _import(ctx, env, installed, cwd=tree))


def fix_1(ctx):
    env = _env(ctx)
    installed = _installed(ctx)
    tree = _tree(ctx, installed)
    cmd = abi.record_fix("env-modules", ctx.record["id"], 1)["after"]
    code = cmd.split('python -c "', 1)[1].rsplit('"', 1)[0]
    inside = env.python_run(code, timeout=600, cwd=tree, PYTHONPATH=str(installed))
    outside = env.python_run(code, timeout=600, cwd=_venv._tmp_root(), PYTHONPATH=str(installed))
    ctx.note("inside the tree: " + inside.tail(300).strip())
    ctx.note("elsewhere: " + outside.tail(300).strip())
    if str(tree) not in inside.output or "'layers'" in inside.output:
        raise AssertionError("the check did not show the tree's folder without layers/")
    if str(installed) not in outside.output or "'layers'" not in outside.output:
        raise AssertionError("the check did not show the installed folder with layers/")


def fix_2(ctx):
    env = _env(ctx)
    installed = _installed(ctx)
    ctx.note("the wheel's files as pip would install them (unpacked; `pip install --force-reinstall --no-deps` not run)")
    ctx.call(abi.raise_again, _import(ctx, env, installed, cwd=_venv._tmp_root()))


def fix_3(ctx):
    ctx.skip("rebuilding a vLLM checkout is a CUDA build of hours on this 2-core machine")


def fix_4(ctx):
    env = _env(ctx)
    installed = _installed(ctx)
    _tree(ctx, installed)
    ctx.call(abi.raise_again, _import(ctx, env, installed, cwd=_venv._tmp_root()))
