"""Whole-process times of the CLI, beside `python -c pass` and `grep -r` over data/, in one run.

    .venv/bin/python bench/cli_bench.py [--repeat 5]

What a user waits for is the process: interpreter start, imports, loading, answering. Each
command runs --repeat times; the table shows the median and its ratio to a bare interpreter.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ERRKB = str(Path(sys.executable).parent / "errkb")
PASTE = "AssertionError: SplitKV not supported on SM 9.0"


def median_seconds(cmd: list[str], repeat: int, stdin: str | None = None) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, input=stdin, capture_output=True, text=True, cwd=REPO)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = [
        ("python -c pass", [sys.executable, "-c", "pass"], None),
        ("errkb --help", [ERRKB, "--help"], None),
        ("grep -r (message over data/)", ["grep", "-rl", "SplitKV not supported", "data/"], None),
        ("errkb explain (stdin)", [ERRKB, "explain", "-"], PASTE),
        ("errkb show fa4-splitkv-sm90", [ERRKB, "show", "fa4-splitkv-sm90"], None),
    ]
    base = None
    print(f"{'command':32} {'seconds':>8} {'x python':>9}")
    for name, cmd, stdin in rows:
        seconds = median_seconds(cmd, args.repeat, stdin)
        base = base or seconds
        print(f"{name:32} {seconds:8.3f} {seconds / base:9.1f}")


if __name__ == "__main__":
    main()
