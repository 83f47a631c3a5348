"""API throughput: /v1/match against /v1/health, side by side, in one run, on loopback.

    .venv/bin/python bench/api_bench.py [--seconds 10] [--connections 16]

Starts one `errkb serve` (uvicorn, one worker) on a free loopback port and drives it with
wrk (Debian's `wrk` package), first GET /v1/health, then POST /v1/match with realistic pastes
(rotated per request by a small Lua script), then health again. Every run is bounded in time.
The ratio match/health says how much of the server's capacity matching itself costs; the
server's CPU time per request (from /proc, Linux) says where it goes. A second server
(bench/_ceiling_app.py) then answers the same POSTs with everything but the matching (the same
request model, a response of /v1/match's mean size): its ratio is the ceiling a matcher that
cost nothing would reach, so the gap to it is the matcher's alone.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
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
    parser.add_argument("--seconds", type=int, default=10)
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

    def measured(*args) -> tuple[float, float]:
        """Requests/s and the server's CPU microseconds per request."""
        cpu = cpu_seconds(pids[-1])
        rps = wrk(*args)
        return rps, (cpu_seconds(pids[-1]) - cpu) / (rps * args[1]) * 1e6

    with serving(pids=pids) as base:
        wrk(base + "/v1/health", 2, args.connections)  # warm-up
        wrk(base + "/", 2, args.connections, str(script))
        health1 = measured(base + "/v1/health", args.seconds, args.connections)
        match = measured(base + "/", args.seconds, args.connections, str(script))
        health2 = measured(base + "/v1/health", args.seconds, args.connections)
        body_bytes = mean_response_bytes(base + "/v1/match", bodies)
    health = ((health1[0] + health2[0]) / 2, (health1[1] + health2[1]) / 2)

    # The ceiling: the same request handling and a response of /v1/match's mean size, no matching.
    ceiling_script = tmp / "ceiling.lua"
    ceiling_script.write_text((LUA % bodies).replace('"/v1/match"', '"/bench/no-matching"'))
    uvicorn = [sys.executable, "-m", "uvicorn", "--app-dir", str(Path(__file__).parent), "_ceiling_app:app",
               "--log-level", "info"]
    env = dict(os.environ, ERRKB_BENCH_BODY_BYTES=str(body_bytes))
    with serving(pids=pids, command=uvicorn, env=env) as base:
        wrk(base + "/", 2, args.connections, str(ceiling_script))
        ceiling = measured(base + "/", args.seconds, args.connections, str(ceiling_script))
        ceiling_health = measured(base + "/v1/health", args.seconds, args.connections)
    print(f"wrk, 2 threads, {args.connections} connections, {args.seconds} s per run, one uvicorn worker\n")
    print("| endpoint | requests/s | server CPU µs per request |")
    print("|---|---|---|")
    print(f"| GET /v1/health (mean of before and after) | {health[0]:.0f} | {health[1]:.0f} |")
    print(f"| POST /v1/match ({args.pastes} rotating pastes) | {match[0]:.0f} | {match[1]:.0f} |")
    print(f"| match / health | {match[0] / health[0]:.0%} | |")
    print(f"| ceiling: POST without matching, same request and response size (own server) | {ceiling[0]:.0f} | {ceiling[1]:.0f} |")
    print(f"| ceiling / health (that server's health: {ceiling_health[0]:.0f} req/s) | {ceiling[0] / ceiling_health[0]:.0%} | |")


if __name__ == "__main__":
    main()
