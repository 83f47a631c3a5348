"""Steps that run in a process of their own: a CUDA fault leaves its process's context unusable,
and a preloaded library or CUDA_LAUNCH_BLOCKING changes the whole process. The child is the
worker's own interpreter and environment plus what the step adds; it may torch.save its results
to the path it gets as sys.argv[1], and the step compares them with a reference."""

from __future__ import annotations

import os
import sys

from verification.cases import _venv


def run(ctx, code: str, name: str, *, env: dict | None = None, timeout: float = 240):
    """Run `code` as a script file (Triton reads a kernel's source from its file) and return
    (the run, the object the child saved or None)."""
    root = _venv._tmp_root()
    script, saved = root / f"{name}.py", root / f"{name}.pt"
    script.write_text(code)
    saved.unlink(missing_ok=True)
    res = _venv.run([sys.executable, script, saved], env={**os.environ, **(env or {})}, timeout=timeout)
    return res, (ctx.torch.load(saved) if saved.exists() else None)


def printed(output: str, prefix: str) -> str | None:
    """The rest of the first line the child printed with `prefix`, or None."""
    return next((line[len(prefix):].strip() for line in output.splitlines() if line.startswith(prefix)), None)
