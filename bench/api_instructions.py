"""Instructions per request through the API's ASGI app: health, match and the no-matching
ceiling, counted by valgrind's callgrind (Debian's `valgrind`). Repeatable to a fraction of a
percent on a noisy machine, where requests/s are not (bench/api_bench.py is the real-server
throughput; this says whether a change made a request cheaper).

    .venv/bin/python bench/api_instructions.py [--requests 600]

Each endpoint runs in its own process: the app is called in-process (FastAPI, its middleware,
the route and errkb's core; uvicorn's socket and HTTP parsing left out) with the same 200
realistic pastes as api_bench.py, warmed up once, then counted inside functools.reduce only.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

ROUTES = {"health": ("GET", "/v1/health"), "match": ("POST", "/v1/match"), "ceiling": ("POST", "/v1/match")}


def run_requests(endpoint: str, count: int) -> None:
    """The measured process: `count` requests to one endpoint, counted inside functools.reduce."""
    from errkb import templates
    from errkb.dataset import Dataset
    from errkb.kb import KnowledgeBase
    from match_bench import make_paste

    os.environ.setdefault("ERRKB_BENCH_BODY_BYTES", "1800")
    import _ceiling_app
    from errkb.api.app import create_app

    dataset = Dataset.load()
    kb = (_ceiling_app.NoMatching if endpoint == "ceiling" else KnowledgeBase)(dataset)
    app = create_app(kb=kb)
    app.state.kb = kb  # the app is called without its lifespan
    rng = random.Random(7)
    pool = [s for s in kb.dataset.sites.values() if len(templates.literal_text(s.template)) >= 20]
    bodies = [json.dumps({"text": make_paste(s, rng), "limit": 5}).encode() for s in rng.sample(pool, 200)]
    method, path = ROUTES[endpoint]

    async def call(body: bytes) -> None:
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
                 "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
                 "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                             (b"content-length", str(len(body)).encode())],
                 "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000), "state": {}}
        messages = [{"type": "http.request", "body": body, "more_body": False}]
        sent = []

        async def receive():
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)

        await app(scope, receive, send)
        if sent[0]["status"] != 200:
            raise SystemExit(f"{endpoint}: status {sent[0]['status']}")

    loop = asyncio.new_event_loop()
    body_of = (lambda k: b"") if method == "GET" else (lambda k: bodies[k % len(bodies)])
    for k in range(len(bodies)):  # warm-up: patterns compiled, JSON cached
        loop.run_until_complete(call(body_of(k)))
    functools.reduce(lambda _, k: loop.run_until_complete(call(body_of(k))), range(count), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # the measured child process
    args = parser.parse_args()
    if args.measure:
        return run_requests(args.measure, args.requests)
    if not shutil.which("valgrind"):
        raise SystemExit("needs valgrind: apt-get install valgrind")
    procs = {endpoint: subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=functools_reduce",
         "--callgrind-out-file=/dev/null", sys.executable, __file__, "--measure", endpoint, "--requests", str(args.requests)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for endpoint in ROUTES}
    counts = {}
    for endpoint, proc in procs.items():
        _, err = proc.communicate(timeout=1800)
        found = re.search(r"Collected : (\d+)", err)
        if proc.returncode or not found:
            raise SystemExit(f"{endpoint} failed:\n{err[-2000:]}")
        counts[endpoint] = int(found.group(1)) / args.requests
    print(f"callgrind, {args.requests} requests per endpoint through the ASGI app (no sockets)\n")
    print("| endpoint | instructions per request | health / endpoint |")
    print("|---|---|---|")
    for endpoint, label in (("health", "GET /v1/health"), ("match", "POST /v1/match"),
                            ("ceiling", "ceiling: the same POST, matching replaced by a fixed body")):
        print(f"| {label} | {counts[endpoint]:,.0f} | {counts['health'] / counts[endpoint]:.0%} |")
    print(f"| matching itself (match - ceiling) | {counts['match'] - counts['ceiling']:,.0f} | |")


if __name__ == "__main__":
    main()
