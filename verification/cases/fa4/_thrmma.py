"""`import flash_attn.cute` of flash-attn-4 4.0.0b15 under nvidia-cutlass-dsl 4.6.0, on the CPU.

Shared by the two records about `cute.core.ThrMma` (fa4-cute-core-thrmma-cutlass-dsl-4-6 and
cute-dsl-4-6-core-thrmma-removed). The annotation is evaluated when flash_attn/cute/utils.py is
imported, before anything asks for a device, so a machine without a GPU meets it as a GPU machine
does. Each environment is a virtual environment of its own (Python 3.11, torch 2.13.0+cpu from the
local wheel folder, Triton 3.6.0 from PyPI: quack-kernels imports it), holding what the venv's own pip
(23.2.1) resolves today for the step's requirements; the fixes run their pip command inside a copy of the
failing environment (made the same way, under another name), then import again. Every import runs
in a child process, and each step notes the versions pip chose."""

from __future__ import annotations

import re

from verification.cases import _builds as b
from verification.cases import _venv

RELEASE = "4.0.0b15"
FIXED_RELEASE = "4.0.0b16"
DSL = "4.6.0"
TRITON = "triton==3.6.0"  # quack-kernels imports triton; torch's CPU wheel does not bring it
DISTS = ("flash-attn-4", "nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-base", "nvidia-cutlass-dsl-libs-core",
         "quack-kernels")
IMPORT = ("import importlib.metadata as m\n"
          f"for d in {DISTS!r}:\n"
          "    try: print('version', d, m.version(d))\n"
          "    except m.PackageNotFoundError: pass\n"
          "import flash_attn.cute\n"
          "print('imported flash_attn.cute from', flash_attn.cute.__file__)\n")

_runs: dict[str, _venv.Run] = {}


def env(ctx, key: str, *requirements: str) -> _venv.Venv:
    return _venv.noted(ctx, _venv.venv(ctx, f"fa4-thrmma-{key}",
                                       install=[*b.cpu_torch_requirement(), TRITON, *requirements]))


def failing(ctx, key: str) -> _venv.Venv:
    """The record's environment: flash-attn-4 4.0.0b15 with nvidia-cutlass-dsl 4.6.0 (`key` names a copy)."""
    return env(ctx, key, f"flash-attn-4=={RELEASE}", f"nvidia-cutlass-dsl=={DSL}")


def imported(ctx, venv: _venv.Venv, key: str) -> _venv.Run:
    """`import flash_attn.cute` in `venv` (once per key), with the versions noted."""
    if key not in _runs:
        _runs[key] = venv.python_run(IMPORT)
    res = _runs[key]
    versions = [ln[len("version "):] for ln in res.output.splitlines() if ln.startswith("version ")]
    ctx.note(f"{key}: " + ", ".join(versions))
    return res


def reproduce(ctx):
    res = imported(ctx, failing(ctx, "b15-dsl460"), "flash-attn-4 4.0.0b15 + nvidia-cutlass-dsl 4.6.0")
    frames = re.findall(r'File "[^"]*/site-packages/([^"]+)", line (\d+)', res.output)
    if frames:
        ctx.note("the traceback's last frame: {}:{}".format(*frames[-1]))
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def pip_then_import(ctx, key: str, *pip_args: str) -> _venv.Run:
    """The fix's `python -m pip install ...` run in a fresh copy of the failing environment, then the import."""
    venv = failing(ctx, key)
    if key not in _runs:
        res = venv.pip("install", *pip_args)
        ctx.note(f"pip install {' '.join(pip_args)}: exit {res.returncode}"
                 + (f"; pip said: {res.tail(300)}" if "ERROR" in res.output else ""))
        if res.returncode != 0:
            raise RuntimeError(f"the fix's pip command failed: {res.tail(600)}")
    return imported(ctx, venv, key)


def upgraded(ctx) -> _venv.Run:
    """`python -m pip install -U --pre flash-attn-4` in the failing environment, then the import."""
    return pip_then_import(ctx, "upgrade", "-U", "--pre", "flash-attn-4")


def dsl_held(ctx, *pins: str) -> _venv.Run:
    return pip_then_import(ctx, "hold-" + "-".join(p.split("<")[0].split(">")[0] for p in pins), *pins)


def first_fixed_release(ctx) -> _venv.Run:
    """flash-attn-4 4.0.0b16 with nvidia-cutlass-dsl 4.6.0 exactly, in a new environment."""
    return imported(ctx, env(ctx, "b16-dsl460", f"flash-attn-4=={FIXED_RELEASE}", f"nvidia-cutlass-dsl=={DSL}"),
                    "flash-attn-4 4.0.0b16 + nvidia-cutlass-dsl 4.6.0")


def runs_clean(res: _venv.Run) -> None:
    _venv.finished(res, "imported flash_attn.cute", "import flash_attn.cute")


def fix_pinned_dsl(ctx):
    """Both records' second fix: the DSL held below 4.6 in the failing environment, noting what
    the pin alone does (quack-kernels 0.6.3 stays and asks for nvidia-cutlass-dsl~=4.6.0), then
    with quack-kernels held below 0.6 too, where the import must run."""
    alone = dsl_held(ctx, "nvidia-cutlass-dsl>=4.4.2,<4.6")
    ctx.note("the DSL pin alone in the failing environment: "
             + ("imports" if "imported flash_attn.cute" in alone.output else _venv.last_exception(alone.output, 300)))
    ctx.call(runs_clean, dsl_held(ctx, "nvidia-cutlass-dsl>=4.4.2,<4.6", "quack-kernels<0.6"))


def fix_upgraded(ctx):
    """The fix's `pip install -U --pre flash-attn-4` in the failing environment: the import runs."""
    ctx.call(runs_clean, upgraded(ctx))
