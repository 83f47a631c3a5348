"""Whole-process times of the CLI, beside `python -c pass` and `grep -r` over data/, in one run.

    .venv/bin/python bench/cli_bench.py [--repeat 5]

What a user waits for is the process: interpreter start, imports, loading, answering. Each
command runs --repeat times after one warm-up run; the table shows the median and its ratio to
a bare interpreter. The last row is one run with an empty index cache (errkb.index_cache).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ERRKB = str(Path(sys.executable).parent / "errkb")
PASTE = "AssertionError: SplitKV not supported on SM 9.0"


# As a user's shell runs it: bytecode may be written (an installed errkb has it already), and
# the first run of each command, which builds the index cache or writes bytecode, is not counted.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def median_seconds(cmd: list[str], repeat: int, stdin: str | None = None) -> float:
    times = []
    for _ in range(repeat + 1):
        start = time.perf_counter()
        subprocess.run(cmd, input=stdin, capture_output=True, text=True, cwd=REPO, env=ENV)
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:])


def cold_seconds(stdin: str) -> float:
    """`errkb explain` with an empty index cache: what the first run after a data change costs."""
    with tempfile.TemporaryDirectory() as empty:
        start = time.perf_counter()
        subprocess.run([ERRKB, "explain", "-"], input=stdin, capture_output=True, text=True, cwd=REPO,
                       env={**ENV, "ERRKB_CACHE_DIR": empty})
        return time.perf_counter() - start


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
    seconds = cold_seconds(PASTE)
    print(f"{'errkb explain, no cache (once)':32} {seconds:8.3f} {seconds / base:9.1f}")


if __name__ == "__main__":
    main()
