"""`errkb verify`: run cases (default), `errkb verify merge FILE...`, `errkb verify list`.

Also runnable without errkb's dependencies: `PYTHONPATH=. python3 -m errkb.verify ...`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path



def _default_data_dir(args) -> Path:
    from errkb.verify import runner

    return runner.REPO / "data"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", nargs="?", default="run", choices=["run", "merge", "list"],
                   help="run cases (default), merge result files into data/verification/, or list cases")
    p.add_argument("files", nargs="*", help="merge: runner result files (JSON lines) or results.json files")
    p.add_argument("--record", action="append", default=[], help="only this record (repeatable)")
    p.add_argument("--backend", action="append", default=[], help="only cases of this backend (repeatable)")
    p.add_argument("--step", action="append", default=[],
                   help="only steps whose id matches this pattern (repeatable; e.g. 'entry-*', 'reproduce')")
    p.add_argument("--shard", help="I/N: run the I-th of N shares (0 <= I < N), split by record")
    p.add_argument("--out", help="result file to append to (JSON lines; default verification-results.jsonl)")
    p.add_argument("--cases", help="cases folder (default: verification/cases in the repository)")
    p.add_argument("--python", help="interpreter for the workers (default: this one)")
    p.add_argument("--timeout", type=float, help="seconds per case (default: the case's TIMEOUT, else 300)")
    p.add_argument("--jobs", type=int, default=1,
                   help="worker groups run at once (default 1): each backend's claim steps share one worker and "
                        "stay serial; each entry-point step has a worker of its own")
    p.add_argument("--retry-errors", action="store_true", help="re-run cases whose earlier result is error")
    p.add_argument("--log", help="file that gets the workers' stderr")
    p.add_argument("--into", help="merge: results file to update (default: DATA/verification/results.json)")
    p.add_argument("--no-records", action="store_true", help="merge: do not update the records' verification field")
    p.add_argument("--format", choices=["text", "json"], default="text")


def execute(args, data_dir: Path) -> int:
    from errkb.verify import results as res, runner  # loaded when a verify command runs, not for --help

    if args.action == "merge":
        if not args.files:
            print("errkb verify merge: give at least one result file", file=sys.stderr)
            return 2
        into = Path(args.into) if args.into else data_dir / res.RESULTS
        try:
            body = res.merge_files([Path(f) for f in args.files], into)
        except res.RehearsalResults as exc:
            print(f"errkb verify merge: {exc}", file=sys.stderr)
            return 2
        changed = [] if args.no_records else res.update_records(data_dir, body)
        summary = res.summary(data_dir) if into == data_dir / res.RESULTS else None
        if args.format == "json":
            print(json.dumps({"results": len(body["results"]), "records_changed": changed, "summary": summary},
                             indent=1))
        else:
            print(f"{into}: {len(body['results'])} results from {len(body['environments'])} environment(s)")
            print(f"records updated: {len(changed)}" + (f" ({', '.join(changed)})" if changed else ""))
        return 0
    cases_dir = Path(args.cases) if args.cases else runner.DEFAULT_CASES
    if not cases_dir.is_dir():
        print(f"no cases folder {cases_dir}: run from a checkout, or pass --cases DIR", file=sys.stderr)
        return 2
    cases, records = runner.all_cases(cases_dir, data_dir)
    unknown = [r for r in args.record if r not in records]
    if unknown:
        print(f"unknown record(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    cases = runner.select(cases, records, record_ids=set(args.record), backends=set(args.backend),
                          shard=runner.parse_shard(args.shard), steps=args.step)
    if args.action == "list":
        for c in cases:
            print(f"{c.id}\t{c.backend}\t{json.dumps(c.requires, sort_keys=True)}")
        return 0
    out = Path(args.out or "verification-results.jsonl")
    log = open(args.log, "a", encoding="utf-8") if args.log else None  # noqa: SIM115

    def progress(r):
        extra = f" ({r['reason']})" if r.get("reason") else ""
        err = f" max_err={r['max_error']:.3g}" if isinstance(r.get("max_error"), float) else ""
        print(f"{r['status']:9} {r['case']} {r['duration_s']:.2f}s{err}{extra}"[:400], flush=True)

    report = runner.run(cases, records, out, python=args.python, timeout=args.timeout,
                        retry_errors=args.retry_errors, log=log, progress=progress if args.format == "text" else None,
                        jobs=args.jobs)
    if log:
        log.close()
    if args.format == "json":
        print(json.dumps(report, indent=1))
    else:
        env = report["env"]
        print(f"environment {report['env_id']}: {env.get('gpu') or 'no GPU'} {env.get('arch')} torch {env.get('torch')}")
        print("counts: " + ", ".join(f"{k} {v}" for k, v in report["counts"].items()))
        print("seconds by backend: " + ", ".join(f"{k} {v}" for k, v in report["seconds_by_backend"].items()))
    return 0


def register(subparsers, data_dir_of) -> None:
    p = subparsers.add_parser("verify", help="run verification cases on this machine, or merge results",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=lambda args: execute(args, Path(data_dir_of(args))), leftovers_into="files")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m errkb.verify", description=__doc__)
    parser.add_argument("--data-dir", help="dataset folder (default: data/ in the repository)")
    add_arguments(parser)
    args = parser.parse_intermixed_args(argv)  # `merge --into X A B` as well as `merge A B --into X`
    data_dir = Path(args.data_dir) if args.data_dir else _default_data_dir(args)
    return execute(args, data_dir)
