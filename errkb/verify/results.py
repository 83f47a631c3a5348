"""Merged results (`data/verification/results.json`), per-record verdicts and the stats block."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from errkb import layout
from errkb.verify.spec import entry_kind

RESULTS = layout.RESULTS
STATUSES = ("confirmed", "refuted", "error", "skipped")
# What an entry-point step (`entry-<kind>`) showed, best first: the record's message came first,
# another message came first, the call went through without it, the step failed, it could not run.
ENTRY_VERDICTS = ("reached", "preempted", "not-raised", "error", "skipped")
_KEEP_ENV = ("gpu", "arch", "compute_capability", "gpu_count", "driver", "cuda", "torch", "python", "platform",
             "libraries", "errkb_commit")


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def read_any(path: Path) -> tuple[dict, list[dict]]:
    """(environments, results) from a runner's JSON-lines file or a merged results.json."""
    from errkb.verify.runner import read_results

    path = Path(path)
    text = path.read_text()
    if text.lstrip().startswith("{") and path.suffix == ".json":
        body = json.loads(text)
        return body.get("environments", {}), body.get("results", [])
    envs, out = {}, []
    for r in read_results(path):
        env = r.pop("env", None)
        if env is not None:
            envs.setdefault(r["env_id"], env)
        out.append(r)
    return envs, out


class RehearsalResults(ValueError):
    """Result files from a pretend-CUDA rehearsal (errkb.verify.pretend): not GPU results."""


def merge_files(paths: list[Path], into: Path) -> dict:
    """Combine result files with what `into` holds; the newest result per (case, environment) wins.
    Refuses (RehearsalResults) any file holding results of a pretend-CUDA rehearsal."""
    envs: dict[str, dict] = {}
    best: dict[tuple[str, str], dict] = {}
    sources = ([into] if Path(into).exists() else []) + [Path(p) for p in paths]
    rehearsals = [str(p) for p in paths if any(e.get("pretend_cuda") for e in read_any(p)[0].values())]
    if rehearsals:
        raise RehearsalResults("not merged: results of a pretend-CUDA rehearsal (ERRKB_PRETEND_CUDA), "
                               "not of a GPU: " + ", ".join(rehearsals))
    for path in sources:
        e, results = read_any(path)
        for k, v in e.items():
            envs[k] = {key: v.get(key) for key in _KEEP_ENV if key in v}
        for r in results:
            key = (r["case"], r["env_id"])
            if key not in best or (r.get("finished_at") or "") >= (best[key].get("finished_at") or ""):
                best[key] = r
    merged = sorted(best.values(), key=lambda r: (r["backend"], r["case"], r["env_id"]))
    for r in merged:
        r.pop("env", None)
        r.pop("warnings", None) if not r.get("warnings") else None
    used = {r["env_id"] for r in merged}
    body = {"schema": 1, "environments": {k: envs[k] for k in sorted(used) if k in envs}, "results": merged}
    _atomic_write(Path(into), json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    return body


def load(data_dir: Path) -> dict:
    path = layout.results_path(data_dir)
    if not path.exists():
        return {"schema": 1, "environments": {}, "results": []}
    return json.loads(path.read_text())


def is_entry(result_or_case) -> bool:
    """An entry-point step's result (or case id): it records what users see at an entry point and
    is kept out of the record's claim verdict."""
    case = result_or_case if isinstance(result_or_case, str) else result_or_case["case"]
    return entry_kind(case) is not None


def entry_verdict(result: dict) -> str:
    """reached / preempted / not-raised / error / skipped for one entry-point step's result."""
    status = result["status"]
    if status == "confirmed":
        return "reached"
    if status == "refuted":
        return (result.get("observed") or {}).get("entry") or "preempted"
    return status


def entry_verdicts(body: dict) -> dict[str, dict[str, str]]:
    """Per record and entry-point kind, the best verdict over every environment (ENTRY_VERDICTS order)."""
    out: dict[str, dict[str, str]] = {}
    for r in body.get("results", []):
        kind = entry_kind(r["case"])
        if kind is None:
            continue
        verdict = entry_verdict(r)
        mine = out.setdefault(r["record"], {})
        if kind not in mine or ENTRY_VERDICTS.index(verdict) < ENTRY_VERDICTS.index(mine[kind]):
            mine[kind] = verdict
    return out


def record_verdicts(body: dict) -> dict[str, dict]:
    """Per record: status from its cases' results over every environment, the case ids, a note.
    Entry-point steps are left out: where users first meet the message does not make the message
    or its fixes right or wrong (see entry_verdicts)."""
    envs = body.get("environments", {})
    by_record: dict[str, list[dict]] = {}
    for r in body.get("results", []):
        if is_entry(r):
            continue
        by_record.setdefault(r["record"], []).append(r)
    out = {}
    for rid, results in sorted(by_record.items()):
        statuses = {r["status"] for r in results}
        reproduced = any(r["status"] == "confirmed" and r["case"].endswith(":reproduce") for r in results)
        if "refuted" in statuses:
            status = "refuted"
        elif "error" in statuses:
            status = "error"
        elif reproduced:  # the claim itself held somewhere; fixes/controls that ran held too
            status = "confirmed"
        else:  # nothing ran, or only fixes/controls did: the error itself is unverified here
            status = "skipped"
        cases = sorted({r["case"] for r in results}, key=lambda c: (_order(c), c))
        lines = []
        for eid in sorted({r["env_id"] for r in results}):
            mine = [r for r in results if r["env_id"] == eid]
            counts = {s: sum(1 for r in mine if r["status"] == s) for s in STATUSES}
            env = envs.get(eid, {})
            gpu = f"{env['gpu']} ({env.get('arch')})" if env.get("gpu") else "no GPU"
            where = f"{gpu}, torch {env.get('torch')}, CUDA {env.get('cuda')} (environment {eid})"
            lines.append(f"{where}: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
            for r in sorted(mine, key=lambda r: (_order(r["case"]), r["case"])):
                if r["status"] in ("refuted", "error", "skipped"):
                    obs = r.get("observed") or {}
                    seen = f" (observed {obs.get('class')}: {str(obs.get('message'))[:200]})" if obs.get("class") else ""
                    lines.append(f"{r['case'].split(':', 1)[1]} {r['status']}: {str(r.get('reason'))[:300]}{seen}")
        out[rid] = {"status": status, "cases": cases, "note": "; ".join(lines), "environments":
                    sorted({r["env_id"] for r in results})}
    return out


def _order(case_id: str) -> int:
    step = case_id.split(":", 1)[1]
    return 0 if step == "reproduce" else 2 if step == "control" else 3 if entry_kind(step) else 1


def update_records(data_dir: Path, body: dict) -> list[str]:
    """Write each verified record's `verification` field; returns the ids whose field changed.

    A record a person marked `disputed` keeps that status (and its note) while its results are
    still `refuted`; any other verdict replaces it.
    """
    verdicts = record_verdicts(body)
    changed = []
    for path in layout.record_paths(data_dir):
        record = json.loads(path.read_text())
        verdict = verdicts.get(record["id"])
        if verdict is None:
            continue
        old = record.get("verification") or {}
        new = {"status": verdict["status"], "cases": verdict["cases"], "note": verdict["note"] or None}
        if old.get("status") == "disputed" and verdict["status"] == "refuted":
            new = {"status": "disputed", "cases": verdict["cases"], "note": old.get("note")}
        if new != old:
            record["verification"] = new
            _atomic_write(path, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
            changed.append(record["id"])
    return changed


def summary(data_dir: Path) -> dict:
    """The `verification` block of `errkb stats`: record verdicts by status (and per backend),
    case counts, and every environment the results come from, each naming its GPU."""
    body = load(data_dir)
    verdicts = record_verdicts(body)
    disputed = 0
    for path in layout.record_paths(data_dir):
        if (json.loads(path.read_text()).get("verification") or {}).get("status") == "disputed":
            disputed += 1
    counts = {s: sum(1 for v in verdicts.values() if v["status"] == s) for s in STATUSES}
    claims = [r for r in body["results"] if not is_entry(r)]
    cases = {s: sum(1 for r in claims if r["status"] == s) for s in STATUSES}
    by_backend: dict[str, dict] = {}
    for r in claims:
        b = by_backend.setdefault(r["backend"], {s: 0 for s in STATUSES} | {"seconds": 0.0})
        b[r["status"]] += 1
        b["seconds"] = round(b["seconds"] + float(r.get("duration_s") or 0), 2)
    environments = []
    for eid, env in body.get("environments", {}).items():
        environments.append({"id": eid, "gpu": env.get("gpu") or "none (CPU only)", "arch": env.get("arch"),
                             "compute_capability": env.get("compute_capability"), "driver": env.get("driver"),
                             "cuda": env.get("cuda"), "torch": env.get("torch"),
                             "libraries": env.get("libraries", {}), "errkb_commit": env.get("errkb_commit"),
                             "cases": sum(1 for r in body["results"] if r["env_id"] == eid)})
    return {**counts, "disputed": disputed, "records_verified": len(verdicts), "cases": cases,
            "reached_from_entry_point": sum(1 for v in entry_verdicts(body).values() if "reached" in v.values()),
            "entry_points": entry_summary(body),
            "cases_by_backend": dict(sorted(by_backend.items())), "environments": environments}


def entry_summary(body: dict) -> dict:
    """Entry-point steps: records by their best verdict (a record reached through one entry point
    and preempted at another counts as reached), and the steps' results by verdict."""
    per_record = entry_verdicts(body)
    best = [min(v.values(), key=ENTRY_VERDICTS.index) for v in per_record.values()]
    steps = [entry_verdict(r) for r in body.get("results", []) if is_entry(r)]
    return {"records": len(per_record),
            "records_by_verdict": {v: best.count(v) for v in ENTRY_VERDICTS},
            "cases": {v: steps.count(v) for v in ENTRY_VERDICTS},
            "seconds": round(sum(float(r.get("duration_s") or 0) for r in body.get("results", []) if is_entry(r)), 2)}
