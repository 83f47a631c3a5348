"""One line per entry-point step of a runner result file, and whether every step got a verdict.

    python3 verification/device/entry_summary.py RESULTS.jsonl

A verdict is `reached`, `preempted` or `not-raised` (errkb.verify.results.entry_verdict); a step
that ended `error` or `skipped` showed nothing about the entry point, so the exit status is 1
when any did (or when the file holds no entry step): run again before spending GPU time.
Standard library only, like the runner.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from errkb.verify.results import entry_verdict, is_entry  # noqa: E402
from errkb.verify.runner import read_results  # noqa: E402

VERDICTS = ("reached", "preempted", "not-raised")


def summarize(path: Path) -> tuple[list[str], bool]:
    """(lines to print, whether every entry step got a verdict)."""
    results = [r for r in read_results(path) if is_entry(r)]
    lines, ok = [], bool(results)
    for r in sorted(results, key=lambda r: r["case"]):
        verdict = entry_verdict(r)
        seen = r.get("observed") or {}
        what = r.get("reason") if verdict not in VERDICTS or verdict == "not-raised" else (
            f"{seen.get('class')}: {seen.get('message')}")
        lines.append(f"{verdict:10} {r['case']}  {str(what)[:240]}")
        ok = ok and verdict in VERDICTS
    envs = {str((r.get("env") or {}).get("pretend_cuda")) for r in results}
    if envs != {"None"}:
        lines.append(f"pretend CUDA {', '.join(sorted(envs))}: a rehearsal, not a GPU result (merge refuses it)")
    lines.append(f"{sum(entry_verdict(r) in VERDICTS for r in results)} of {len(results)} entry steps got a verdict"
                 + ("" if ok else "; the others showed nothing about the entry point (see reason)"))
    return lines, ok


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    lines, ok = summarize(Path(argv[0]))
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
