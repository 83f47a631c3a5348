"""The runner: picks cases, runs them in per-backend worker processes, appends results.

Results go to a JSON-lines file, one object per finished case, appended and fsynced as each
case ends, so a killed run loses at most the case in flight. A run started again with the same
--out skips every case that already has a result for the same environment and case file
(`--retry-errors` re-runs the ones that ended in `error`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from errkb import layout
from errkb.verify.env import env_id, errkb_commit
from errkb.verify import spec
from errkb.verify.spec import Case, discover

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CASES = REPO / "verification" / "cases"
DEFAULT_TIMEOUT = 300.0
SCHEMA = 1


def load_records(data_dir: Path) -> dict[str, dict]:
    records = {}
    for path in layout.record_paths(data_dir):
        body = json.loads(path.read_text())
        records[body["id"]] = {"id": body["id"], "kind": body.get("kind", "error"),
                               "error_class": body["error_class"], "template": body["template"],
                               "backends": body["backends"], "area": path.parent.name}
    return records


def parse_shard(text: str | None) -> tuple[int, int]:
    if not text:
        return 0, 1
    i, _, n = text.partition("/")
    i, n = int(i), int(n)
    if not (n >= 1 and 0 <= i < n):
        raise ValueError(f"--shard {text}: want I/N with 0 <= I < N")
    return i, n


def select(cases: list[Case], records: dict, *, record_ids=None, backends=None, shard=(0, 1),
           steps=None) -> list[Case]:
    """The cases to run: of these records and worker groups, whose step id matches one of the
    `steps` patterns (fnmatch: `entry-*` is every entry-point step), in shard i of n."""
    import fnmatch

    out = [c for c in cases if not record_ids or c.record in record_ids]
    if steps:
        out = [c for c in out if any(fnmatch.fnmatchcase(c.id.split(":", 1)[1], p) for p in steps)]
    if backends:
        out = [c for c in out if c.backend in backends]  # the worker group, not the record's tags
    # Shard by record, round-robin within each backend: a record's steps stay together and every
    # shard gets a share of each backend (so each shard compiles only what its records need).
    i, n = shard
    if n > 1:
        keep, counters, seen = set(), {}, {}
        for c in out:
            if c.record not in seen:
                k = counters.get(c.backend, 0)
                counters[c.backend] = k + 1
                seen[c.record] = k % n
        keep = {r for r, s in seen.items() if s == i}
        out = [c for c in out if c.record in keep]
    return out


def worker_group(case: Case) -> str:
    """The worker process a case runs in: one per backend for its claim steps, and a fresh one
    for each entry-point step. A launch publishes configs, reconfigures logging, stands in
    compiled modules and imports a whole project; an import that fails half-way leaves the process
    in a state no user has (a module run twice re-registers its types and ops), so nothing one
    launch did may reach another step, and no claim step inherits any of it (nor the other way)."""
    return f"{case.backend}:entry:{case.id}" if spec.entry_kind(case.step) else case.backend


def group_label(group: str) -> str:
    """The backend label a worker group's seconds are reported under (`vllm:entry` for all of
    vLLM's entry-point steps)."""
    return ":".join(group.split(":")[:2])


def read_results(path: Path) -> list[dict]:
    """Result lines of a runner file; a torn last line (killed mid-write) is ignored."""
    out = []
    if not Path(path).exists():
        return out
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def probe_env(python: str, extra_env: dict) -> dict:
    proc = subprocess.run([python, "-m", "errkb.verify.env"], capture_output=True, text=True,
                          env=extra_env, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"environment probe failed: {proc.stderr[-2000:]}")
    env = json.loads(proc.stdout.strip().splitlines()[-1])
    env["errkb_commit"] = errkb_commit()
    env["host"] = os.uname().nodename
    return env


class Worker:
    def __init__(self, python: str, env: dict, log):
        self.proc = subprocess.Popen([python, "-m", "errkb.verify.worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                     start_new_session=True, bufsize=1)
        self.lines: queue.Queue = queue.Queue()
        self.err_tail: list[str] = []
        self.log = log
        threading.Thread(target=self._pump_out, daemon=True).start()
        threading.Thread(target=self._pump_err, daemon=True).start()

    def _pump_out(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _pump_err(self):
        for line in self.proc.stderr:
            self.err_tail = (self.err_tail + [line])[-40:]
            if self.log:
                self.log.write(line)

    def wait_line(self, timeout: float):
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return TimeoutError

    def send(self, obj: dict) -> bool:
        try:
            self.proc.stdin.write(json.dumps(obj) + "\n")
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


class Results:
    """Append-only JSON-lines result file: one fsynced line per finished case."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, result: dict) -> None:
        line = json.dumps(result, sort_keys=True, default=str) + "\n"
        with open(self.path, "a", encoding="utf-8") as fh:
            # a torn line from a killed run stays on its own line
            if fh.tell():
                with open(self.path, "rb") as tail:
                    tail.seek(-1, os.SEEK_END)
                    if tail.read(1) != b"\n":
                        fh.write("\n")
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())


def run(cases: list[Case], records: dict, out: Path, *, python: str | None = None, timeout: float | None = None,
        retry_errors: bool = False, env_extra: dict | None = None, log=None, progress=None,
        jobs: int = 1) -> dict:
    """Run cases; return counts. Existing results in `out` for the same environment are kept."""
    python = python or sys.executable
    worker_env = dict(os.environ)
    worker_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), worker_env.get("PYTHONPATH")]))
    worker_env["PYTHONUNBUFFERED"] = "1"
    worker_env.update(env_extra or {})
    env = probe_env(python, worker_env)
    eid = env_id(env)
    results = Results(out)
    done = {}
    for r in read_results(out):
        if r.get("env_id") == eid and not (retry_errors and r.get("status") == "error"):
            done[(r["case"], r.get("case_sha"))] = r
    counts = {"confirmed": 0, "refuted": 0, "error": 0, "skipped": 0, "resumed": 0}
    groups: dict[str, list[Case]] = {}
    for c in cases:
        groups.setdefault(worker_group(c), []).append(c)
    timings: dict[str, float] = {}
    lock = threading.Lock()

    def run_group(backend: str, group: list[Case]) -> None:
        worker = None
        t0 = time.monotonic()
        for case in group:
            if (case.id, case.sha) in done:
                with lock:
                    counts["resumed"] += 1
                continue
            limit = float(timeout or case.timeout or DEFAULT_TIMEOUT)
            if timeout and case.timeout:
                limit = float(min(timeout, case.timeout))
            if worker is None:
                worker = Worker(python, worker_env, log)
                ready = worker.wait_line(120)
                if ready in (None, TimeoutError):
                    worker.kill()
                    raise RuntimeError("worker did not start: " + "".join(worker.err_tail)[-2000:])
            started = time.monotonic()
            sent = worker.send({"case": case.to_json(), "record": records[case.record]})
            line = worker.wait_line(limit) if sent else None
            if line is TimeoutError:
                worker.kill()
                body = {"status": "error", "reason": f"timeout: no result after {limit:g} s (worker killed)",
                        "crash": "timeout"}
                worker = None
            elif line is None:
                worker.kill()
                time.sleep(0.2)  # let the stderr pump drain
                code = worker.proc.returncode
                body = {"status": "error", "reason": f"worker crashed: {_exit_text(code)}", "crash": _exit_text(code),
                        "stderr_tail": "".join(worker.err_tail)[-3000:]}
                worker = None
            else:
                body = json.loads(line)
                if body.pop("restart", False):
                    worker.close()
                    worker = None
            body.setdefault("duration_s", round(time.monotonic() - started, 3))
            result = {"schema": SCHEMA, "case": case.id, "record": case.record, "step": case.step,
                      "backend": case.backend, "case_sha": case.sha, "case_file": _rel(case.file),
                      "env_id": eid, "env": env, "finished_at": dt.datetime.now(dt.timezone.utc).isoformat(
                          timespec="seconds"), **{k: v for k, v in body.items() if k != "case"}}
            for key in ("reason", "observed", "max_error", "tolerance"):
                result.setdefault(key, None)
            with lock:
                results.append(result)
                counts[result["status"]] += 1
                if progress:
                    progress(result)
        if worker is not None:
            worker.close()
        with lock:
            label = group_label(backend)
            timings[label] = round(timings.get(label, 0.0) + time.monotonic() - t0, 2)

    if jobs <= 1:
        for backend, group in groups.items():
            run_group(backend, group)
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for fut in [pool.submit(run_group, b, g) for b, g in groups.items()]:
                fut.result()
    timings = {b: timings[b] for b in dict.fromkeys(map(group_label, groups)) if b in timings}
    return {"env_id": eid, "env": env, "counts": counts, "seconds_by_backend": timings}


def _rel(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def all_cases(cases_dir: Path, data_dir: Path) -> tuple[list[Case], dict]:
    records = load_records(data_dir)
    return discover(cases_dir, records), records
