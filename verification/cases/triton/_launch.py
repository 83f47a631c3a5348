"""Launch a kernel of _launch_kernels.py on the GPU, or, on a machine without one, compile the same
kernel for an sm90 target in a child process (_compile.compile_for): Triton's front end (the cache
key's dependency walk, the code generator's checks) decides the same either way, and the step's
notes say which happened.

`printed` re-raises an exception the way Python prints it as a traceback's last line, for records
that quote that line with its class ("KeyError: 'float8_e8m0fnu'",
"CompilationError: at 4:11:"); `shell_traceback` runs a kernel's first launch (or compile) in a
child whose output goes through a shell pipeline, as a record's "read the error" fix does."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import traceback

from verification.cases.triton._compile import compile_for, compiled, reraise

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "_launch_kernels.py")
KERNELS_CONSTEXPR = os.path.join(HERE, "_launch_kernels_constexpr.py")
TARGET = 90  # the compile target without a GPU: the GPU these cases are run on (H100/H200)


def on_gpu(ctx) -> bool:
    import torch

    if torch.cuda.is_available():
        ctx.device = "cuda"
        return True
    return False


def kernels(path: str = KERNELS):
    """The module at `path` (imported once, under a name of its own)."""
    import importlib.util

    name = "errkb_" + os.path.splitext(os.path.basename(path))[0].lstrip("_")
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def launch_or_compile(ctx, launch, name: str, signature: dict, constexprs: dict, path: str = KERNELS):
    """On a GPU: launch() (the kernel's first launch compiles it for this GPU) and return what it
    returns. Without one: compile kernel `name` for sm90 in a child and raise what it raised;
    returns None when it compiled (the caller checks that with `compiled_here`)."""
    if on_gpu(ctx):
        import torch

        ctx.note(f"launched on {torch.cuda.get_device_name()} (sm{''.join(map(str, torch.cuda.get_device_capability()))})")
        return launch()
    ctx.note(f"no GPU: {name} compiled for an sm{TARGET} target in a child (triton.compile), not launched")
    reraise(compile_for(ctx, path, name, signature, constexprs, TARGET))
    return None


def compiled_here(ctx, name: str, signature: dict, constexprs: dict, what: str, path: str = KERNELS) -> None:
    """A claimed-good kernel without a GPU: it must compile for sm90 (no numbers: nothing runs)."""
    compiled(ctx, compile_for(ctx, path, name, signature, constexprs, TARGET), what)


def printed(fn, *args, **kwargs):
    """Call fn; an exception it raises comes back as Python prints it at the bottom of a traceback
    (`traceback.format_exception_only`: the class's qualified name, ': ', its text), as an
    instance of a subclass of its own class whose text is that, with the original as its cause."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - re-raised, only its text changes
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        cls = type(exc)
        shown = type(cls.__name__, (cls,), {
            "__init__": lambda self, t: BaseException.__init__(self, t),
            "__str__": lambda self: self.args[0],
            "__module__": cls.__module__,
        })
        raise shown(text) from exc


# A child that launches (GPU) or compiles for sm90 (no GPU) one kernel of a kernels file, without
# catching anything: what it prints is what a user's script prints.
CHILD = r'''
import importlib.util, json, sys
path, name, sig, consts, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4]), sys.argv[5]
spec = importlib.util.spec_from_file_location("errkb_child_kernels", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
import torch
if args and torch.cuda.is_available():
    eval(args, {"mod": mod, "torch": torch})
else:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    src = ASTSource(fn=getattr(mod, name), signature={**sig, **{k: "constexpr" for k in consts}}, constexprs=consts)
    triton.compile(src, target=GPUTarget("cuda", int(sys.argv[6]), 32))
print("ERRKB-CHILD-DONE")
'''


def shell_traceback(ctx, path: str, name: str, signature: dict, constexprs: dict, launch_expr: str | None,
                    pipe: str, cc: int = TARGET, timeout: float = 300) -> tuple[str, str]:
    """Run the child above through `bash -c "python child.py ... 2>&1 | tee FULL | <pipe>"`:
    returns (what the pipeline printed, the child's whole output). `launch_expr` is evaluated on a
    GPU with `mod` (the kernels file) and `torch`; without one, or with launch_expr None, the
    kernel is compiled for sm`cc` instead."""
    import json
    import shlex

    folder = tempfile.mkdtemp(prefix="errkb-triton-child-")
    script, full = os.path.join(folder, "first_launch.py"), os.path.join(folder, "full.txt")
    with open(script, "w") as fh:
        fh.write(CHILD)
    argv = [sys.executable, script, path, name, json.dumps(signature), json.dumps(constexprs), launch_expr or "",
            str(cc)]
    cmd = " ".join(shlex.quote(a) for a in argv) + f" 2>&1 | tee {shlex.quote(full)} | {pipe}"
    env = dict(os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp(prefix="errkb-triton-cache-"))
    env.pop("TRITON_INTERPRET", None)
    res = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, timeout=timeout)
    with open(full) as fh:
        whole = fh.read()
    where = ("launched on this GPU" if launch_expr and on_gpu(ctx) else
             f"compiled for sm{cc}" + ("" if launch_expr is None else " (no GPU)"))
    ctx.note(f"pipeline: python first_launch.py 2>&1 | {pipe} ({where})")
    return res.stdout, whole
