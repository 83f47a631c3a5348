"""FlashInfer's JIT on a machine without a GPU: the arch checks and the nvcc call that come before
any kernel runs (verification/cases/flashinfer, env-build).

flashinfer-python releases are pure-Python wheels on PyPI (py3-none-any): their kernels are
JIT-compiled on first use. Each release is `pip install --no-deps --target`ed into a folder of its own
next to with_cpu_torch()'s torch (2.13.0+cpu: no CUDA build, no device), with what `import flashinfer`
needs (DEPS, one folder for all releases). The steps run a child Python with those folders on
PYTHONPATH and the variables a user sets (FLASHINFER_CUDA_ARCH_LIST, CUDA_HOME), nothing else of
FlashInfer's inherited; FlashInfer's JIT cache goes to a workspace under the runner's temporary root
(FLASHINFER_WORKSPACE_BASE), never to ~/.cache/flashinfer. Nothing is stood in, and no device
capability is pretended: the set of targets is either empty (no device visible, this machine) or the
list the step gives, as a user's Dockerfile would.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from verification.cases import _builds as b
from verification.cases import _venv

# what `import flashinfer` imports beyond torch (0.5.3 and 0.7.2), tvm-ffi within both releases' range
DEPS = ("apache-tvm-ffi==0.1.15.post2", "requests", "nvidia-ml-py", "tqdm", "numpy", "einops", "click", "tabulate",
        "filelock")
# the module every step asks FlashInfer to JIT: the fused SiLU-and-mul activation, one small .cu file
SPEC = ("import flashinfer, torch\n"
        "print('versions', flashinfer.__version__, torch.__version__, torch.version.cuda, torch.cuda.device_count())\n"
        "from flashinfer.jit.activation import gen_act_and_mul_module\n"
        "spec = gen_act_and_mul_module('silu')\n"
        "print('spec', spec.name)\n")
BUILD = SPEC + "spec.build_and_load()\nprint('built')\n"
_UNSET = ("FLASHINFER_CUDA_ARCH_LIST", "CUDA_HOME", "CUDA_PATH", "FLASHINFER_WORKSPACE_BASE", "TORCH_CUDA_ARCH_LIST",
          "FLASHINFER_JIT_VERBOSE", "FLASHINFER_DISABLE_JIT", "FLASHINFER_DISABLE_VERSION_CHECK", "FLASHINFER_CUBIN_DIR")


def site(ctx, version: str) -> tuple[_venv.Venv, list[str]]:
    """(with_cpu_torch()'s environment, [flashinfer-python `version`'s folder, the DEPS folder])."""
    env = b.with_cpu_torch(ctx)
    folder = b.target_dir(ctx, f"flashinfer-python=={version}", no_deps=True, env=env)
    deps = b.pip_target(ctx, "target-flashinfer-deps", *DEPS, env=env, what="FlashInfer's import dependencies")
    note = f"flashinfer-python {version} (--no-deps) next to {b.cpu_torch_requirement()[0]}, with " + " ".join(DEPS)
    if note not in ctx.notes:
        ctx.note(note)
    return env, [folder, str(deps)]


def workspace(name: str, *, fresh: bool = True) -> Path:
    folder = _venv._tmp_root() / f"flashinfer-ws-{name}"
    if fresh:
        shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def run(ctx, version: str, code: str, *, arch_list: str | None = None, cuda_home: str | None = None,
        ws: Path | None = None, timeout: float = 900, extra_path=(), extra_env: dict | None = None,
        must_import: bool = True) -> _venv.Run:
    """`code` in a child with flashinfer-python `version`; FLASHINFER_CUDA_ARCH_LIST and CUDA_HOME only
    when given; `extra_path` (folders after FlashInfer's, before its dependencies: a companion package
    such as flashinfer-cubin) and `extra_env` (variables a user sets) as given. A child that does not get
    past `import flashinfer` skips the step, unless `must_import` is off (the import is what is checked)."""
    env, path = site(ctx, version)
    child = _venv.tool_env(VIRTUAL_ENV=str(env.path), PYTHONPATH=os.pathsep.join([path[0], *map(str, extra_path), *path[1:]]))
    for name in _UNSET:
        child.pop(name, None)
    child.update(extra_env or {})
    child["FLASHINFER_WORKSPACE_BASE"] = str(ws or workspace(f"{version}-scratch"))
    if arch_list is not None:
        child["FLASHINFER_CUDA_ARCH_LIST"] = arch_list
    if cuda_home is not None:
        child["CUDA_HOME"] = cuda_home
    res = _venv.run([env.python, "-c", code], env=child, cwd=_venv._tmp_root(), timeout=timeout)
    line = next((l for l in res.output.splitlines() if l.startswith("versions ")), None)
    how = ", ".join(f"{k}={v!r}" for k, v in (("FLASHINFER_CUDA_ARCH_LIST", arch_list), ("CUDA_HOME", cuda_home))
                    if v is not None) or "no FLASHINFER_CUDA_ARCH_LIST"
    ctx.note(f"[{how}] " + (line or "flashinfer did not import") + ": " + _venv.last_exception(res.output, 300))
    if line is None and must_import:
        ctx.skip(f"flashinfer {version} did not import here: {res.tail(400)}")
    return res


def nvcc_used(output: str) -> list[str]:
    """The nvcc of each compile command ninja printed (`[1/2] /usr/local/cuda/bin/nvcc ... -c x.cu ...`)."""
    return [m.group(1) for m in map(_NVCC.search, output.splitlines()) if m and " -c " in m.string]


_NVCC = re.compile(r"(?:^|\s)(/\S*/bin/nvcc)\s")
