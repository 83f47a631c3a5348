"""`import flash_attn.cute` where flash-attn 2.x is installed and flash-attn-4 is not:
"No module named 'flash_attn.cute'".

flash-attn 2.x's __init__ imports its compiled flash_attn_2_cuda before anything else, so on a machine
without a CUDA build `import flash_attn.cute` stops on that module first (noted by reproduce). The
one real configuration of a 2.x install that imports without it is flash-attn's own Triton backend
(FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE: flash_attn_interface then takes its kernels from
flash_attn/flash_attn_triton_amd, pure Python on Triton), which is what these steps use; how Python
looks for the cute subpackage does not depend on which kernels the package loaded.

Environments (uv 0.9.0, Python of the runner, torch 2.14.1 from PyPI, einops): flash-attn 2.8.2 and
2.8.3, each a wheel built from the PyPI sdist with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE (pip 26.3,
--no-build-isolation, in the with_torch environment; as the diffusers case does).

Reproduce: with 2.8.2 installed, `import flash_attn` works and `import flash_attn.cute` raises the
record's message; the step notes what 2.8.3 (which has an early flash_attn/cute) raises instead.
Fix 1: flash-attn-4 installed into the 2.8.2 environment (`uv pip install --prerelease allow`, uv's
form of the fix's `pip install --pre`), `from flash_attn.cute import flash_attn_func` imports on the
CPU; the step notes the flash-attn-4 release resolved, and what happens when 2.8.3 is installed after
flash-attn-4 (the fix's caveat). Running FA4 needs an sm90/sm100 GPU (not run). Fix 2: the fix's
two diagnostics run in that environment (the distribution list read with importlib.metadata, since a
uv environment has no pip) and show both distributions and the one flash_attn folder."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
TORCH = "torch==2.14.1"
AMD = {"FLASH_ATTENTION_TRITON_AMD_ENABLE": "TRUE"}
REPRODUCE = "import flash_attn; print('flash_attn', flash_attn.__version__)\nimport flash_attn.cute"
FIX_1 = ("from flash_attn.cute import flash_attn_func; import flash_attn.cute as c\n"
         "print('cute', c.__file__, flash_attn_func.__module__)")
FIX_2 = ["import importlib.metadata as m; print('dists', sorted(d.metadata['Name'] for d in m.distributions() if 'flash' in d.metadata['Name'].lower()))",
         "import flash_attn; print('path', list(flash_attn.__path__))"]



def _env(ctx, key, *requirements):
    return b.uv_env(ctx, key, TORCH, "einops", *requirements)




def _run(env, code, **extra):
    return env.python_run(code, timeout=600, cwd=_venv._tmp_root(), **extra)


def reproduce(ctx):
    tool, env = _env(ctx, "fa2-2.8.2", b.flash_attn_python_wheel(ctx, "2.8.2"))
    plain = _run(env, REPRODUCE)
    ctx.note(f"2.8.2 without FLASH_ATTENTION_TRITON_AMD_ENABLE: {_venv.last_exception(plain.output)}")
    res = _run(env, REPRODUCE, **AMD)
    ctx.note("2.8.2 with FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE: "
             + next((l for l in res.output.splitlines() if l.startswith("flash_attn ")), "flash_attn did not import")
             + f"; then {_venv.last_exception(res.output)}")
    tool3, env3 = _env(ctx, "fa2-2.8.3", b.flash_attn_python_wheel(ctx, "2.8.3"))
    ctx.note(f"2.8.3 (same setting): {_venv.last_exception(_run(env3, REPRODUCE, **AMD).output)}")
    if not re.search(r"^flash_attn 2\.8\.2$", res.output, re.M):
        ctx.skip(f"flash_attn 2.8.2 did not import with its Triton backend: {res.tail(400)}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def _fa4_env(ctx):
    tool, env = _env(ctx, "fa2-2.8.2-fa4", b.flash_attn_python_wheel(ctx, "2.8.2"))
    stamp = env.path / ".errkb-fa4"
    if not stamp.exists():
        res = b.uv_pip(tool, env, "install", "--prerelease", "allow", "flash-attn-4")
        if res.returncode != 0:
            ctx.skip(f"could not install flash-attn-4: {res.tail(400)}")
        stamp.write_text("ok")
    ctx.note("then `uv pip install --prerelease allow flash-attn-4` into it; installed: "
             + ", ".join(f"{d} {env.version(d)}" for d in ("flash-attn", "flash-attn-4", "nvidia-cutlass-dsl")))
    return tool, env


def fix_1(ctx):
    tool, env = _fa4_env(ctx)
    res = _run(env, FIX_1, **AMD)

    def imports():
        _venv.reraise(res.output)
        line = next((l for l in res.output.splitlines() if l.startswith("cute ")), None)
        if line is None:
            raise AssertionError(res.tail(400))
        ctx.note(line)

    ctx.call(imports)
    # the caveat: 2.8.3 installed after flash-attn-4 (a second environment, so the verdict above stands alone)
    tool2, env2 = _env(ctx, "fa4-then-2.8.3", "--prerelease", "allow", "flash-attn-4")
    stamp = env2.path / ".errkb-fa2"
    if not stamp.exists():
        got = b.uv_pip(tool2, env2, "install", "--reinstall-package", "flash-attn", b.flash_attn_python_wheel(ctx, "2.8.3"))
        stamp.write_text(got.tail(200))
    after = _run(env2, "import flash_attn.cute as c; print('cute-version', getattr(c, '__version__', None))", **AMD)
    ctx.note("caveat check, flash-attn-4 then 2.8.3 installed: "
             + next((l for l in after.output.splitlines() if l.startswith("cute-version")), _venv.last_exception(after.output)))


def fix_2(ctx):
    tool, env = _fa4_env(ctx)
    outs = [_run(env, code, **AMD) for code in FIX_2]

    def shows():
        for res in outs:
            _venv.reraise(res.output)
        dists = next((l for l in outs[0].output.splitlines() if l.startswith("dists")), "")
        path = next((l for l in outs[1].output.splitlines() if l.startswith("path")), "")
        names = set(re.findall(r"'([^']+)'", dists.replace("-", "_").lower()))
        if not {"flash_attn", "flash_attn_4"} <= names or not path:
            raise AssertionError(f"{dists} / {path} / {outs[1].tail(300)}")
        ctx.note(f"{dists}; {path}")

    ctx.call(shows)
