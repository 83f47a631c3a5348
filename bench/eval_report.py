"""Top-1/top-3 accuracy on the labelled real pastes from GitHub issues (tests/eval/).

    .venv/bin/python bench/eval_report.py [--misses]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from errkb.dataset import Dataset  # noqa: E402
from errkb.evaluate import evaluate, summary  # noqa: E402
from errkb.match import MatchIndex  # noqa: E402

EVAL_DIR = Path(__file__).resolve().parent.parent / "tests" / "eval"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--misses", action="store_true", help="list the pastes whose top-1 is wrong")
    args = parser.parse_args()
    outcomes = evaluate(MatchIndex(Dataset.load()), EVAL_DIR)
    s = summary(outcomes)
    print(f"{s['pastes']} real pastes ({s['negatives']} without a known error)")
    print(f"top-1: {s['top1']:.1%}   top-3: {s['top3']:.1%}")
    if args.misses:
        for o in outcomes:
            if not o.top1:
                print(f"  {o.file}: expected {o.expected} got {o.got}")


if __name__ == "__main__":
    main()
