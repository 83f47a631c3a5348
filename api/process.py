"""Run `errkb serve` as a real server process on a free loopback port (tests, benchmarks)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from collections.abc import Iterator
from typing import IO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(start_timeout_s: float = 30.0, pids: list[int] | None = None,
            command: list[str] | None = None, env: dict | None = None, stderr: IO | None = None) -> Iterator[str]:
    """Yield the base URL of a freshly started server; stop it afterwards. Its process id is
    appended to `pids` when given (the API benchmark reads the server's CPU time). `command` replaces
    `errkb serve` (its port is appended as `--port N`), e.g. uvicorn with a benchmark's own app, or
    `errkb serve` with options. The server's log goes to `stderr` when given (an open file)."""
    port = free_port()
    argv = (command or [sys.executable, "-m", "errkb.cli", "serve"]) + ["--port", str(port)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr or subprocess.DEVNULL, env=env)
    base = f"http://127.0.0.1:{port}"
    if pids is not None:
        pids.append(proc.pid)
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                urllib.request.urlopen(base + "/v1/health", timeout=1)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"errkb serve did not come up on {base}") from None
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)
