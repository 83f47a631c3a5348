"""Search-pattern time on near-miss text, beside the certificate's step bound, in one run.

    .venv/bin/python bench/redos_bench.py [--size 65536] [--top 10]

Validation never times patterns (errkb/redos.py certifies them from their structure); this
shows what the certified patterns cost in practice. Each shipped template's search pattern and
Finder run on its near-miss texts; the reference is `str.count` of the template's first
literal over the same text (one linear pass), so the ratio says how many linear passes the
worst template costs, on this machine, in this run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from errkb import redos, templates  # noqa: E402
from errkb.dataset import Dataset  # noqa: E402


def best_of(fn, text: str, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=64 * 1024)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    ds = Dataset.load(Path(__file__).resolve().parent.parent / "data")
    shipped = sorted({s.template for s in ds.sites.values()} | {r.template for r in ds.records})
    rows = []
    for template in shipped:
        finder = templates.Finder(template)
        lead = next((lit for lit, _ in templates.parse(template) if lit.strip()), " ")
        worst = (0.0, 0.0)
        for text in redos.near_misses(template, args.size):
            spent = max(best_of(finder.pattern.search, text), best_of(finder.search, text))
            reference = best_of(lambda t: t.count(lead), text)
            worst = max(worst, (spent, reference))
        rows.append((worst[0], worst[1], redos.template_step_bound(template), template))
    rows.sort(reverse=True)
    print(f"{len(shipped)} templates, near-miss texts of {args.size:,} characters")
    print(f"{'ms':>8} {'ref ms':>8} {'ratio':>7} {'step bound':>11}  template")
    for spent, reference, bound, template in rows[:args.top]:
        ratio = spent / reference if reference else float("inf")
        print(f"{spent * 1e3:8.2f} {reference * 1e3:8.3f} {ratio:7.0f} {bound:11,}  {template[:70]!r}")


if __name__ == "__main__":
    main()
