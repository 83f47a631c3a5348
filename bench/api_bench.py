"""API throughput: /v1/match against /v1/health, side by side, in one run, on loopback.

    .venv/bin/python bench/api_bench.py [--rounds 30] [--seconds 1] [--connections 16]

Starts one `errkb serve` (uvicorn, one worker) on a free loopback port and drives it with
wrk (Debian's `wrk` package): GET /v1/health and POST /v1/match with realistic pastes (rotated
per request by a small Lua script), back to back, in several rounds (this machine's speed drifts
by a third over a minute; the ratio of two neighbouring runs does not). Every run is bounded in
time. The ratio match/health says how much of the server's capacity matching itself costs; the
server's CPU time per request (from /proc, Linux) says where it goes. A second server
(bench/_ceiling_app.py) then answers the same POSTs on the same route with everything but the
matching (its knowledge base returns a body of /v1/match's mean size): its ratio is the ceiling a
matcher that cost nothing would reach, so the gap to it is the matcher's alone.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from errkb import templates  # noqa: E402
from errkb.api.process import serving  # noqa: E402
from errkb.dataset import Dataset  # noqa: E402
from match_bench import make_paste  # noqa: E402

LUA = """
local bodies = {}
for line in io.lines("%s") do bodies[#bodies + 1] = line end
local i = 0
request = function()
  i = i %% #bodies + 1
  return wrk.format("POST", "/v1/match", {["Content-Type"] = "application/json"}, bodies[i])
end
"""


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mean_response_bytes(url: str, bodies: Path) -> int:
    """Mean size of /v1/match's answers to the benchmark's pastes."""
    sizes = []
    for line in bodies.read_text().splitlines():
        request = urllib.request.Request(url, data=line.encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            sizes.append(len(response.read()))
    return sum(sizes) // len(sizes)


def wrk(url: str, seconds: int, connections: int, script: str | None = None) -> float:
    cmd = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s"]
    if script:
        cmd += ["-s", script]
    out = subprocess.run(cmd + [url], capture_output=True, text=True, timeout=seconds + 30).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise SystemExit(f"{errors.group(1)} failed requests:\n{out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--verbose", action="store_true", help="print every round on stderr")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--pastes", type=int, default=200)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("needs wrk: apt-get install wrk")

    rng = random.Random(7)
    ds = Dataset.load()
    pool = [s for s in ds.sites.values() if len(templates.literal_text(s.template)) >= 20]
    tmp = Path(tempfile.mkdtemp())
    bodies = tmp / "bodies.txt"
    bodies.write_text("\n".join(json.dumps({"text": make_paste(s, rng), "limit": 5})
                                for s in rng.sample(pool, args.pastes)) + "\n")
    script = tmp / "match.lua"
    script.write_text(LUA % bodies)

    pids: list[int] = []

    def measured(url: str, script: str | None = None) -> tuple[float, float]:
        """Requests/s and the server's CPU microseconds per request."""
        cpu = cpu_seconds(pids[-1])
        rps = wrk(url, args.seconds, args.connections, script)
        return rps, (cpu_seconds(pids[-1]) - cpu) / (rps * args.seconds) * 1e6

    def rounds(health_url: str, other_url: str, script: str) -> list[tuple[tuple[float, float], tuple[float, float]]]:
        """(health, other) measured back to back, `args.rounds` times, in alternating order: the
        machine's speed drifts over a run, and a ratio of two neighbours cancels most of it."""
        wrk(health_url, 2, args.connections)  # warm-up
        wrk(other_url, 2, args.connections, script)
        out = []
        for r in range(args.rounds):
            if r % 2 == 0:
                health = measured(health_url)
                other = measured(other_url, script)
            else:
                other = measured(other_url, script)
                health = measured(health_url)
            out.append((health, other))
            if args.verbose:
                print(f"round {r}: health {health[0]:.0f} req/s {health[1]:.0f} µs, other {other[0]:.0f} req/s "
                      f"{other[1]:.0f} µs, ratio {other[0] / health[0]:.0%}", file=sys.stderr)
        return out

    with serving(pids=pids) as base:
        main_rounds = rounds(base + "/v1/health", base + "/", str(script))
        body_bytes = mean_response_bytes(base + "/v1/match", bodies)

    # The ceiling: the same request handling and a response of /v1/match's mean size, no matching.
    uvicorn = [sys.executable, "-m", "uvicorn", "--app-dir", str(Path(__file__).parent), "_ceiling_app:app",
               "--log-level", "info"]
    env = dict(os.environ, ERRKB_BENCH_BODY_BYTES=str(body_bytes))
    with serving(pids=pids, command=uvicorn, env=env) as base:
        ceiling_rounds = rounds(base + "/v1/health", base + "/", str(script))

    def column(rows, which: int, field: int) -> float:
        return statistics.median(row[which][field] for row in rows)

    def ratios(rows) -> str:
        each = sorted(other[0] / health[0] for health, other in rows)
        return f"{statistics.median(each):.0%} ({each[0]:.0%}-{each[-1]:.0%})"

    print(f"wrk, 2 threads, {args.connections} connections, one uvicorn worker; {args.rounds} rounds of "
          f"{args.seconds} s per endpoint, health and the other endpoint back to back; medians\n")
    print("| endpoint | requests/s | server CPU µs per request |")
    print("|---|---|---|")
    print(f"| GET /v1/health | {column(main_rounds, 0, 0):.0f} | {column(main_rounds, 0, 1):.0f} |")
    print(f"| POST /v1/match ({args.pastes} rotating pastes) | {column(main_rounds, 1, 0):.0f} | {column(main_rounds, 1, 1):.0f} |")
    print(f"| **match / health**, per round: median (min-max) | {ratios(main_rounds)} | |")
    print(f"| ceiling: the same POST, matching replaced by a fixed body of the mean size (own server) | "
          f"{column(ceiling_rounds, 1, 0):.0f} | {column(ceiling_rounds, 1, 1):.0f} |")
    print(f"| ceiling / that server's health ({column(ceiling_rounds, 0, 0):.0f} req/s) | {ratios(ceiling_rounds)} | |")


if __name__ == "__main__":
    main()
