"""Compile a Triton kernel for a named GPU target, without a GPU, in a child process.

Triton's front end decides some things from the target alone (which fp8 formats an arch has,
what `tl.dot` accepts), and `triton.compile(ASTSource(...), target=GPUTarget("cuda", cc, 32))`
runs the whole pipeline down to a cubin with the ptxas bundled in the wheel, on a machine with no
GPU. Each compile runs in a child process of its own: in one process Triton 3.5.1 keeps state
across targets (an fp8e5 load compiled for sm89 first, then for sm80, fails in ptxas with
"Feature 'cvt with .e4m3x2/.e5m2x2' requires .target sm_89", while sm80 alone compiles: seen on
this machine, 2026-12-06), so a step never sees what an earlier step compiled.

`compile_for` returns the child's answer; `reraise` turns a failed compile back into the chain of
exceptions the child saw (same class names, same messages, each the cause of the one above it), so
`ctx.expect_error` can judge it as it judges any call. Kernels live in files of their own (the
`path` argument): Triton reads a kernel's source from its file.
"""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
import tempfile

MARK = "ERRKB-TRITON-RESULT "

CHILD = r'''
import importlib.util, inspect, json, sys
path, name, sig, consts, cap = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4]), int(sys.argv[5])
spec = importlib.util.spec_from_file_location("errkb_triton_kernels", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
import triton
fn = getattr(mod, name)
from triton.runtime.jit import JITFunction
jit = fn
while not isinstance(jit, JITFunction):  # heuristics/autotune wrappers hold the JITFunction in .fn
    jit = jit.fn
version = tuple(int(x) for x in triton.__version__.split(".")[:2])
if version >= (3, 0):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
pos = {n: i for i, n in enumerate(jit.arg_names)}
if version < (2, 3):  # Triton 2.0-2.2: compile(fn, ...) by argument position, the target as cc
    src, build = None, lambda: triton.compile(jit, signature={pos[k]: v for k, v in sig.items()},
                                              constants={pos[k]: v for k, v in consts.items()}, cc=cap)
elif version < (3, 0):  # Triton 2.3: ASTSource by position, the target as (backend, capability)
    from triton.compiler import ASTSource
    src = ASTSource(fn=jit, signature={pos[k]: v for k, v in sig.items()}, constants={pos[k]: v for k, v in consts.items()})
    build = lambda: triton.compile(src, target=("cuda", cap))
elif "constexprs" in inspect.signature(ASTSource.__init__).parameters:  # Triton 3.3 and later
    src = ASTSource(fn=jit, signature={**sig, **{k: "constexpr" for k in consts}}, constexprs=consts)
elif version >= (3, 2):  # Triton 3.2: by name, constants apart
    src = ASTSource(fn=jit, signature=sig, constants=consts)
else:  # Triton 3.0/3.1: arguments by position
    src = ASTSource(fn=jit, signature={pos[k]: v for k, v in sig.items()},
                    constants={pos[k]: v for k, v in consts.items()})
if version >= (3, 0):
    build = lambda: triton.compile(src, target=GPUTarget("cuda", cap, 32))
try:
    kernel = build()
    out = {"ok": True, "stages": sorted(getattr(kernel, "asm", {}) or ["compiled"]), "triton": triton.__version__}
except Exception as exc:
    chain, e, seen = [], exc, set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        chain.append({"class": type(e).__name__, "module": type(e).__module__, "message": str(e)})
        e = e.__cause__ or e.__context__
    out = {"ok": False, "chain": chain, "triton": triton.__version__}
print("''' + MARK + r'''" + json.dumps(out))
'''


def compile_for(ctx, path: str, name: str, signature: dict, constexprs: dict, cc: int, timeout: float = 240,
                python: str | None = None, env: dict | None = None) -> dict:
    """Compile kernel `name` of the file at `path` for CUDA compute capability `cc` (80, 89, ...)
    in a child process (fresh Triton cache) of this Python or `python` (another environment's, with
    `env` as its environment); returns {"ok": True, "stages": [...]} or
    {"ok": False, "chain": [{"class", "module", "message"}, ...]} (outermost first), each with the
    child's "stderr" (its last 20,000 characters: LLVM and MLIR print there before Triton raises)."""
    env = dict(env if env is not None else os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp(prefix="errkb-triton-cache-"))
    env.pop("TRITON_INTERPRET", None)
    child = subprocess.run([str(python or sys.executable), "-c", CHILD, path, name, json.dumps(signature),
                            json.dumps(constexprs), str(cc)], capture_output=True, text=True, env=env, timeout=timeout)
    result = parse(child.stdout, child.stderr, child.returncode)
    result["stderr"] = child.stderr[-20000:]  # what LLVM/MLIR printed before Triton raised (or returned)
    return result


def parse(stdout: str, stderr: str, returncode: int) -> dict:
    """The child's answer line; a child that printed none (it crashed) is a RuntimeError."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    raise RuntimeError(f"the compile child gave no answer (exit status {returncode}): {stderr[-1500:]}")


def _exception_class(name: str, module: str) -> type:
    """The builtin exception of that name, else a stand-in class with the same name and module."""
    found = getattr(builtins, name, None)
    if isinstance(found, type) and issubclass(found, BaseException) and module == "builtins":
        return found
    return type(name, (Exception,), {"__module__": module})


def rebuild(chain: list[dict]) -> BaseException:
    """The child's exception chain as exceptions here: the outermost, with each inner one as its cause."""
    inner = None
    for item in reversed(chain):
        exc = _exception_class(item["class"], item["module"])(item["message"])
        exc.__cause__ = inner
        inner = exc
    return inner


def reraise(result: dict) -> dict:
    """Raise what a failed compile raised in the child; return the result of one that compiled."""
    if not result.get("ok"):
        raise rebuild(result["chain"])
    return result


def compiled(ctx, result: dict, what: str) -> None:
    """A claimed-good compile: it must have compiled (else the step is refuted with what it raised)."""
    if result.get("ok"):
        last = "cubin" if "cubin" in result["stages"] else result["stages"][-1]
        ctx.note(f"{what}: compiled down to {last} (Triton {result['triton']}); not run, no GPU here")
        return
    from errkb.verify.case import Refuted

    top = result["chain"][0]
    ctx.observed = {"class": top["class"], "message": top["message"][:4000],
                    "cause": [f"{c['class']}: {c['message'][:500]}" for c in result["chain"][1:]]}
    raise Refuted(f"{what}: the compile raised {top['class']}")


KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_kernels.py")
SCORE_TILES = {"BLOCK_M": 32, "BLOCK_N": 32, "HEAD_DIM": 64}


def cached_k_scores(ctx, k_type: str, cc: int) -> dict:
    """`_kernels.scores_cached_k` (Q·Kᵀ with K read from a cache of `k_type`) compiled for sm`cc`:
    the kernel the fp8 KV-cache records' cases compile."""
    ctx.note(f"scores_cached_k with K as {k_type}, compiled for sm{cc}")
    return compile_for(ctx, KERNELS, "scores_cached_k", {"Q": "*fp16", "K": k_type, "Out": "*fp32"}, SCORE_TILES, cc)


# ---------------------------------------------------------------- a Triton release in an environment of its own

# Attention-shaped kernels of _kernels.py with the argument types and block sizes they are compiled with.
EXP_SCORES = ("exp_scores", {"S": "*fp32", "Out": "*fp32", "scale": "fp32"}, {"BLOCK": 128})
SOFTMAX_ROWS = ("softmax_rows", {"S": "*fp32", "Out": "*fp32"}, {"BLOCK_M": 32, "BLOCK_N": 32})


def triton_env(ctx, version: str):
    """A uv environment holding only triton==`version` and setuptools (Triton 3.0-3.2 import it when
    they load their backends): the wheel's own bundled ptxas, no torch, no GPU."""
    from verification.cases import _builds as b

    _, env = b.uv_env(ctx, f"triton-{version}", f"triton=={version}", "setuptools")
    return env


def bundled_ptxas(env, name: str = "ptxas") -> str:
    """The ptxas binary a Triton wheel ships (triton/backends/nvidia/bin/<name>) in `env`."""
    found = sorted(env.path.glob(f"lib/python*/site-packages/triton/backends/nvidia/bin/{name}"))
    if not found:
        raise FileNotFoundError(f"no triton/backends/nvidia/bin/{name} in {env.path}")
    return str(found[0])


def outcome(result: dict) -> str:
    """One line for a step's notes: compiled, the child died (and how), or what it raised."""
    if result.get("ok"):
        return "compiled"
    if result.get("aborted"):
        return f"the child died: {result['aborted'][:200]}"
    return "raised " + "; ".join(f"{c['class']}: {c['message'][:120]}" for c in result["chain"])


def compile_in(ctx, env, kernel: tuple, cc: int, **extra: str) -> dict:
    """compile_for() of one of the kernels above, by the Python of `env` (a triton_env), with `extra`
    environment variables (TRITON_PTXAS_PATH). A child that dies without answering (LLVM aborts the
    process) comes back as {"ok": False, "aborted": <its last stderr line>}."""
    from verification.cases import _venv

    name, sig, consts = kernel
    env_vars = _venv.tool_env(VIRTUAL_ENV=str(env.path), **extra)
    try:
        return compile_for(ctx, KERNELS, name, sig, consts, cc, python=env.python, env=env_vars)
    except RuntimeError as exc:
        lines = [line for line in str(exc).splitlines() if line.strip()]
        return {"ok": False, "aborted": lines[-1] if lines else str(exc), "chain": [], "stderr": str(exc)}
