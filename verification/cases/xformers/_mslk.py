"""xFormers development builds whose attention lives in the separate mslk package, on the CPU.

From git commit ca6d2aa0 (2026-04-21) xformers.ops.fmha only re-exports mslk's attention. The
cases install PyPI's own wheels with uv into a throwaway environment with torch 2.14.1 (PyPI's
CUDA 13.0 build, from uv's cache in ERRKB_VERIFY_CACHE; it imports on a machine without a GPU):

- xformers 0.0.35.dev1130 (2026-04-21: skips the attention names silently when mslk does not
  import) and 0.0.35.dev1147 (2026-10-09: logs a WARNING[XFORMERS] line first), each with
  `--no-deps` (their only other requirements, torch>=2.10 and numpy, are already there);
- mslk 0.0.0, the only mslk release on PyPI: an empty placeholder wheel (no module), which is what
  pip resolves the `mslk` requirement to from PyPI;
- xformers 0.0.35 (the last release, no mslk) for the fix that pins it.

Every import runs in a child process of that environment; what it printed is read back here.
PyTorch's wheel index (where xFormers' CI takes the real mslk) is out of reach from this machine.
"""

from __future__ import annotations

import logging

from verification.cases import _builds as b
from verification.cases import _venv

TORCH = "torch==2.14.1"
DEV_SILENT = "xformers==0.0.35.dev1130"
DEV_WARNS = "xformers==0.0.35.dev1147"
RELEASE = "xformers==0.0.35"
PLACEHOLDER = "mslk==0.0.0"
LOGGER = "xformers"

# What the user's code does first: import xformers.ops and look up the attention function.
LOOKUP = "import xformers, xformers.ops as xops\nprint('xformers', xformers.__version__, flush=True)\nxops.memory_efficient_attention\nprint('found memory_efficient_attention')\n"
FIND_SPEC = "import importlib.util, xformers\nprint('find_spec', importlib.util.find_spec('mslk'))\n"


def env(ctx, key: str, *no_deps: str):
    """torch 2.14.1 and numpy by uv, then `no_deps` (pip requirements) installed with --no-deps."""
    tool, target = b.uv_env(ctx, key, TORCH, "numpy")
    stamp = target.path / ".errkb-no-deps"
    if not (stamp.is_file() and stamp.read_text() == repr(no_deps)):
        res = b.uv_pip(tool, target, "install", "--no-deps", *no_deps)
        if res.returncode != 0:
            ctx.skip(f"could not install {' '.join(no_deps)}: {res.tail(400)}")
        stamp.write_text(repr(no_deps))
    ctx.note(f"then `uv pip install --no-deps {' '.join(no_deps)}`; installed: "
             + ", ".join(f"{d} {target.version(d)}" for d in ("torch", "xformers", "mslk")))
    return target


def run(target, code: str) -> _venv.Run:
    return target.python_run(code, timeout=600, cwd=_venv._tmp_root())


def warning_heads(output: str) -> list[str]:
    """The first line of each WARNING[XFORMERS] block the child printed."""
    return [line for line in output.splitlines() if line.startswith("WARNING[XFORMERS]")]


def relog(output: str) -> None:
    """Log again on the `xformers` logger each WARNING[XFORMERS] block the child printed (logging's
    last-resort handler writes the message alone, continuation lines indented)."""
    log = logging.getLogger(LOGGER)
    block: list[str] = []
    for line in output.splitlines() + [""]:
        if line.startswith("WARNING[XFORMERS]"):
            if block:
                log.warning("\n".join(block))
            block = [line]
        elif block and line.startswith((" ", "\t")):
            block.append(line)
        elif block:
            log.warning("\n".join(block))
            block = []
