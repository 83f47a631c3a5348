"""Runs HERE after a re-run: compare fresh result files with the committed results.

    python3 verification/device/compare.py [--results data/verification/results.json] FILE.jsonl...

For every case in the fresh files, the committed result of the same case on the same GPU arch
(the newest by finish time) is the baseline; skipped results on either side are reported apart,
since a skip says what a run lacked, not what the kernel does. Prints the counts and every case
whose status differs, with both reasons, so a re-run's "same statuses" claim is one command.
Exit status 1 when a confirmed/refuted/error status differs. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

VERDICTS = ("confirmed", "refuted", "error")


def read_fresh(paths: list[Path]) -> list[dict]:
    rows = []
    for path in paths:
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows


def committed_by_case(results_file: Path) -> dict[tuple[str, str], dict]:
    """The newest committed result per (arch, case)."""
    data = json.loads(results_file.read_text(encoding="utf-8"))
    envs = data["environments"]
    newest: dict[tuple[str, str], dict] = {}
    for row in data["results"]:
        arch = envs.get(row["env_id"], {}).get("arch", "")
        key = (arch, row["case"])
        if key not in newest or row["finished_at"] > newest[key]["finished_at"]:
            newest[key] = row
    return newest


def compare(fresh: list[dict], committed: dict[tuple[str, str], dict]) -> tuple[Counter, list[tuple]]:
    counts, differ = Counter(), []
    for row in fresh:
        old = committed.get((row["env"]["arch"], row["case"]))
        if old is None:
            counts["no committed result"] += 1
        elif old["status"] == row["status"]:
            counts["same"] += 1
        elif "skipped" in (old["status"], row["status"]):
            counts["skipped on one side"] += 1
            differ.append((row["case"], old["status"], row["status"], old.get("reason"), row.get("reason")))
        else:
            counts["different"] += 1
            differ.append((row["case"], old["status"], row["status"], old.get("reason"), row.get("reason")))
    return counts, differ


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--results", type=Path, default=Path("data/verification/results.json"))
    args = ap.parse_args(argv)
    fresh = read_fresh(args.files)
    counts, differ = compare(fresh, committed_by_case(args.results))
    print(f"{len(fresh)} fresh results: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for case, old, new, old_reason, new_reason in differ:
        print(f"  {case}: committed {old} ({old_reason or '-'}) -> now {new} ({new_reason or '-'})")
    return 1 if any(old in VERDICTS and new in VERDICTS for _, old, new, *_ in differ) else 0


if __name__ == "__main__":
    sys.exit(main())
