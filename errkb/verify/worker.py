"""A worker process: runs the steps the runner sends it, one JSON line in, one JSON line out.

The runner keeps one worker per backend so compiled kernels and imported modules are reused
between steps (an entry-point step gets a worker of its own: errkb.verify.runner.worker_group);
when a step crashes the process (segfault, abort), hangs past its timeout or poisons the CUDA
context, the runner records that step and starts a fresh worker.
Case output goes to stderr: stdout carries only the protocol. With ERRKB_PRETEND_CUDA set, the
process pretends to have a GPU from its start (errkb.verify.pretend), and every step says so.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import sys
import time
import traceback

from errkb.verify import pretend
from errkb.verify.case import CUDA_POISON, Context, Refuted, Skip
from errkb.verify.spec import arch_matches, arch_text

_modules: dict[str, object] = {}
_import_errors: dict[str, str] = {}


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text.split("+")[0])[:3])


def _torch_ok(spec: str, have: str) -> bool:
    m = re.match(r"^\s*(>=|<=|==|<|>)\s*([\d.]+)\s*$", spec)
    if not m:
        raise ValueError(f"bad torch requirement {spec!r}")
    op, want = m.group(1), _version_tuple(m.group(2))
    got = _version_tuple(have)[: len(want)]
    return {">=": got >= want, "<=": got <= want, "==": got == want, "<": got < want, ">": got > want}[op]


def unmet(req: dict) -> str | None:
    """Why this step cannot run here, or None."""
    needs_torch = req.get("cuda") or "arch" in req or "torch" in req
    if needs_torch or any(p.split(".")[0] == "torch" for p in req.get("packages", [])):
        try:
            import torch
        except Exception as exc:  # noqa: BLE001
            what = f"a {arch_text(req['arch'])} GPU" if "arch" in req else "a CUDA GPU" if req.get("cuda") else "torch"
            return f"needs {what} through torch (torch not importable: {type(exc).__name__}: {exc})"
        if "torch" in req and not _torch_ok(req["torch"], torch.__version__):
            return f"needs torch {req['torch']} (this is {torch.__version__})"
        if req.get("cuda") or "arch" in req:
            if not torch.cuda.is_available():
                return "needs a CUDA GPU (none available)"
        if "arch" in req:
            cc = torch.cuda.get_device_capability()
            if not arch_matches(req["arch"], cc):
                return f"needs {arch_text(req['arch'])} (this GPU is sm{cc[0]}{cc[1]})"
    for name in req.get("packages", []):
        if name in _import_errors:
            return _import_errors[name]
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - any import failure means: not usable here
            _import_errors[name] = f"needs package {name} (not importable: {type(exc).__name__}: {str(exc)[:300]})"
            return _import_errors[name]
    return None


def _load(path: str):
    mod = _modules.get(path)
    if mod is None:
        name = "errkb_case_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        _modules[path] = mod
    return mod


def run_step(req: dict) -> dict:
    case, record = req["case"], req["record"]
    started = time.monotonic()
    out = {"case": case["id"], "status": None, "reason": None, "observed": None, "max_error": None,
           "tolerance": None, "warnings": [], "notes": [], "worker_pid": os.getpid()}
    ctx = None
    pretending = pretend.apply()
    if pretending:
        out["notes"].append(pretending)
    try:
        why = unmet(case["requires"])
        if why:
            out.update(status="skipped", reason=why)
            return out
        device = "cuda" if case["requires"].get("cuda") or "arch" in case["requires"] else "cpu"
        ctx = Context(record, case["step"], device=device)
        mod = _load(case["file"])
        if "torch" in sys.modules:
            sys.modules["torch"].manual_seed(0)
        getattr(mod, case["step"])(ctx)
        if device == "cuda":
            sys.modules["torch"].cuda.synchronize()
        out["status"] = "confirmed"
    except Skip as exc:
        out.update(status="skipped", reason=str(exc))
    except Refuted as exc:
        out.update(status="refuted", reason=str(exc))
    except Exception as exc:  # noqa: BLE001 - a broken case or a crashed library: an error, not a verdict
        text = f"{type(exc).__name__}: {exc}"
        out.update(status="error", reason=text[:2000], traceback=traceback.format_exc()[-4000:])
        if CUDA_POISON.search(text):
            out["restart"] = True  # the CUDA context is unusable: the runner starts a fresh worker
    finally:
        if ctx is not None and ctx.observed and CUDA_POISON.search(str(ctx.observed.get("message"))):
            out["restart"] = True  # even an expected CUDA fault leaves the context unusable
        if ctx is not None:
            out.update(observed=ctx.observed, max_error=ctx.max_error, tolerance=ctx.tolerance,
                       warnings=ctx.warnings[:20], notes=out["notes"] + ctx.notes)
        if isinstance(out["max_error"], float) and out["max_error"] != out["max_error"]:
            out["max_error"] = "nan"
        out["duration_s"] = round(time.monotonic() - started, 3)
    return out


def main() -> int:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything a case prints goes to stderr
    sys.stdout = sys.stderr
    pretend.apply()  # before anything the steps import can look for a GPU
    proto.write(json.dumps({"ready": os.getpid()}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        result = run_step(req)
        proto.write(json.dumps(result, default=str) + "\n")
        proto.flush()
        if result.get("restart"):
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
