"""Lookup accuracy: the wild corpus (dev and test, sampled independently of the records) and
the record-derived eval set, side by side.

    .venv/bin/python bench/eval_report.py [--misses] [--round N]

`--misses` lists what dev got wrong or missed (never test's: test is frozen, and only its
figures are reported, so nobody tunes to it). `--round N` adds a line for the dev pastes that
sampling round N brought: run before anything is changed for them, it is a fresh-sample estimate.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from errkb import evaluate as curated, wild  # noqa: E402
from errkb.dataset import Dataset  # noqa: E402
from errkb.match import MatchIndex  # noqa: E402
from errkb.projects import ProjectNames  # noqa: E402

EVAL_DIR = Path(__file__).resolve().parent.parent / "tests" / "eval"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true",
                        help="list dev pastes that were not answered right (with --round, that round's only)")
    parser.add_argument("--round", type=int, metavar="N", help="also score the dev pastes of sampling round N")
    args = parser.parse_args()
    index = MatchIndex(Dataset.load())
    outcomes = wild.evaluate(index)
    names = ProjectNames.load(index.dataset.data_dir, index.evidence_packages)
    with_project = wild.evaluate(index, names=names, text_only=outcomes)
    print("wild corpus (tests/wild, SAMPLING.md); '+project': each paste looked up with its thread's repository")
    print("as the project (a kernel library's tracker names that library; others name none)")
    print(f"{'split':13} {'pastes':>6} {'in scope':>8} {'right':>6} {'wrong':>6} {'abstain':>7} {'top-1':>6}"
          f" {'no-error':>8} {'quiet':>6}")
    for name, judged in (("", outcomes), ("+project", with_project)):
        for part in ("dev", "test"):
            s = wild.summary([o for o in judged if o.label.part == part])
            print(f"{part + name:13} {s['pastes']:6} {s['in_scope']:8} {s['right']:6} {s['wrong']:6} {s['abstained']:7}"
                  f" {s['top1']:6.1%} {s['no_error']:8} {s['quiet_share']:6.1%}")
    urls = wild.round_urls(args.round) if args.round else None
    if urls is not None:
        s = wild.summary([o for o in outcomes if o.label.part == "dev" and o.label.url in urls])
        print(f"{'round' + str(args.round):13} {s['pastes']:6} {s['in_scope']:8} {s['right']:6} {s['wrong']:6}"
              f" {s['abstained']:7} {s['top1']:6.1%} {s['no_error']:8} {s['quiet_share']:6.1%}")
    old = curated.summary(curated.evaluate(index, EVAL_DIR))
    print(f"\nrecord-derived eval (tests/eval): {old['pastes']} pastes, top-1 {old['top1']:.1%}")
    if args.misses:
        dev = [o for o in outcomes if o.label.part == "dev" and o.verdict in ("wrong", "abstained", "spoke")
               and (urls is None or o.label.url in urls)]
        by_family = collections.Counter((o.label.family, o.label.library) for o in dev if o.label.in_scope)
        print("\ndev misses by family and library:")
        for (family, library), n in by_family.most_common():
            print(f"  {n:3}  {family:22} {library}")
        print()
        for o in dev:
            got = o.got[0].id if o.got else "-"
            print(f"  {o.verdict:9} {o.label.file:60} {o.label.library:14} got {got}\n            {o.label.message[:150]!r}")


if __name__ == "__main__":
    main()
