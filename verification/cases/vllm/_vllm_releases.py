"""Older vLLM releases' Python code on the CPU, for records about a pure-Python check of a given release.

A release's PyPI wheel (downloaded once into ERRKB_VERIFY_CACHE/wheels by _abi_wheels.wheel_file) is
unpacked without its compiled libraries (only `vllm/**/*.py` and the dist-info: no step loads vllm._C
or the attention extensions; vLLM logs that vllm._C is missing and goes on), and put first on
PYTHONPATH of a child Python: a virtual environment with torch 2.13.0+cpu (the local CPU wheel, in
place of the release's pinned CUDA torch) and the pure-Python packages these imports need, pinned
(DEPS). Each step runs its code in a child and gets back what it printed after MARK as JSON; an
exception comes back as (class, message, the last traceback frame's file, line and source text), so a
bare `assert` is judged by the statement Python prints, as users see it."""

from __future__ import annotations

import zipfile
from pathlib import Path

from errkb.verify.case import Refuted
from verification.cases import _abi_wheels as abi
from verification.cases import _builds as b
from verification.cases import _venv

# what `import vllm.attention.layers.chunked_local_attention` (0.11.x), its 0.14+/0.16 location and
# vllm.utils.torch_utils need besides torch, found by importing them one missing module at a time
DEPS = ("numpy==2.4.6", "packaging==26.4", "pydantic==2.14.4", "psutil==7.2.2", "cachetools==8.0.3",
        "regex==2026.12.2", "msgspec==0.23.0", "cloudpickle==3.1.3", "pyzmq==27.3.0", "transformers==4.57.6",
        "aiohttp==3.14.5", "cbor2==6.3.0", "setproctitle==1.3.8", "blake3==1.0.11", "pillow==13.0.0",
        "gguf==0.19.0", "pybase64==1.5.1", "py-cpuinfo==9.0.0", "einops==0.8.2")
MARK = "ERRKB-RESULT "

PRELUDE = """
import json, sys, traceback
def errkb_report(value):
    print(%r + json.dumps(value), flush=True)
def errkb_raised(exc):
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return {"class": type(exc).__name__, "message": str(exc), "file": frame.filename, "line": frame.lineno,
            "source": (frame.line or "").strip()}
""" % MARK


def env(ctx) -> _venv.Venv:
    return _venv.noted(ctx, _venv.venv(ctx, "vllm-python-cpu-torch", install=[*b.cpu_torch_requirement(), *DEPS]))


def release(ctx, version: str) -> Path:
    """vLLM `version`'s Python files, unpacked from its wheel into a folder of their own (once per run)."""
    wheel = abi.wheel_file(ctx, "vllm", version)
    dest = _venv._tmp_root() / f"vllm-py-{version}"
    stamp = dest / ".errkb-unpacked"
    if not stamp.is_file():
        with zipfile.ZipFile(wheel) as z:
            z.extractall(dest, [n for n in z.namelist() if n.endswith(".py") or ".dist-info/" in n])
        stamp.write_text(wheel.name)
    ctx.note(f"vllm {version}: the Python files of {wheel.name} (no compiled libraries)")
    return dest


def run(ctx, version: str, code: str, *, path=(), timeout: float = 600, extra_env: dict | None = None):
    """`code` (which calls errkb_report(...)) run in env()'s Python with vLLM `version` first on the path
    (and `extra_env` set); what it reported."""
    root = release(ctx, version)
    res = b.run_with_torch(ctx, PRELUDE + code, env=env(ctx), path=[root, *path], timeout=timeout, extra_env=extra_env)
    return _venv.reported(res, MARK)


def passes(ctx, got: dict, holds: str, refusal: str) -> None:
    """A fix's or control's verdict on a child run: the checked statement did not raise, and the
    run's own `holds` flag is true (else refuted, saying `refusal`)."""
    ctx.call(raise_statement, got["raised"])
    if not got[holds]:
        raise Refuted(refusal)


def raise_statement(got: dict | None) -> None:
    """Raise what the child caught again: a bare AssertionError carries the statement Python printed."""
    if got is None:
        return
    message = got["message"] or (got["source"] if got["class"] == "AssertionError" else "")
    raise _venv.exception_class(got["class"])(message)
