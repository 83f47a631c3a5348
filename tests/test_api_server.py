"""Hostile clients against a real `errkb serve` on 127.0.0.1: half-sent headers, slow and
oversized bodies, huge headers, clients that vanish, too many sockets. Short server timeouts
(1 s); each test waits on its socket for what the server does (an answer, then the close), with a
generous bound that only a broken server reaches: the verdict is what the socket saw, not the time."""

import asyncio
import select
import socket
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from errkb.api.models import MAX_BODY_BYTES
from errkb.api.process import serving

PATIENCE_S = 30.0  # how long a test waits on a socket; a working server answers in about a second


def serve(data_dir, folder, *options):
    """Yield (host, port, log file) of a real `errkb serve` with these options, its stderr logged."""
    command = [sys.executable, "-m", "errkb.cli", "--data-dir", str(data_dir), "serve", *options]
    with open(folder / "stderr.log", "wb") as log, serving(command=command, stderr=log) as base:
        yield urlsplit(base).hostname, urlsplit(base).port, log.name


@pytest.fixture(scope="module")
def slow(data_dir, tmp_path_factory):
    """A server that gives a client 1 s for its headers."""
    yield from serve(data_dir, tmp_path_factory.mktemp("slow"), "--header-timeout", "1", "--keep-alive", "60")


@pytest.fixture(scope="module")
def strict(data_dir, tmp_path_factory):
    """A server that never times a test out (60 s) but holds 8 sockets at most."""
    yield from serve(data_dir, tmp_path_factory.mktemp("strict"), "--header-timeout", "60", "--max-connections", "8")


def connect(server) -> socket.socket:
    return socket.create_connection(server[:2], timeout=PATIENCE_S)


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a socket.timeout if it never does)."""
    data = b""
    with sock:
        while chunk := sock.recv(65536):
            data += chunk
    return data


def test_serve_options_reach_the_server(monkeypatch):
    from errkb import cli
    from errkb.api import server

    seen = {}
    monkeypatch.setattr(server, "serve", lambda data_dir, host, port, limits: seen.update(limits=limits))
    cli.main(["serve", "--header-timeout", "3", "--body-timeout", "4", "--keep-alive", "5", "--max-connections", "6"])
    assert seen["limits"] == server.Limits(header_timeout_s=3, body_timeout_s=4, keep_alive_s=5, max_connections=6)
    cfg = server.config(limits=seen["limits"], configure_logging=False)
    assert cfg.app.state.body_timeout_s == 4 and cfg.timeout_keep_alive == 5 and cfg.limit_concurrency == 7
    assert issubclass(cfg.http, asyncio.Protocol) and cfg.http.__name__ == "GuardedHttpToolsProtocol"


def test_half_sent_headers_are_answered_408_and_closed(slow):
    sock = connect(slow)
    sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow")
    assert read_until_closed(sock).startswith(b"HTTP/1.1 408 ")


def test_half_sent_second_request_on_a_kept_connection_is_closed(slow):
    sock = connect(slow)
    sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    first = b""
    while b'"status":"ok"' not in first:
        first += sock.recv(65536)
    sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 1")  # uvicorn's keep-alive timer stops at this byte
    assert read_until_closed(sock).startswith(b"HTTP/1.1 408 ")


def test_chunked_body_over_the_limit_is_413_before_its_end(strict):
    sock = connect(strict)
    sock.sendall(b"POST /v1/match HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n")
    size = MAX_BODY_BYTES + 1
    sock.sendall(b"%x\r\n" % size + b"x" * size + b"\r\n")  # and never the last chunk
    assert read_until_closed(sock).startswith(b"HTTP/1.1 413 ")


def test_headers_over_the_limit_are_431(strict):
    sock = connect(strict)
    # One endless header (400 KB, no end in sight): more than the limit after the server's first read
    sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: " + b"a" * 400_000)
    assert read_until_closed(sock).startswith(b"HTTP/1.1 431 ")


def test_client_gone_mid_body_is_logged_as_one_line(strict):
    sock = connect(strict)
    sock.sendall(b"POST /v1/match HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"text\": \"x")
    sock.close()  # 90 bytes short
    line = "disconnected before its request was read: POST /v1/match"
    log_path = Path(strict[2])
    deadline = time.monotonic() + PATIENCE_S
    while line not in (log := log_path.read_text()) and "Traceback" not in log and time.monotonic() < deadline:
        time.sleep(0.05)
    assert line in log and "Traceback" not in log and "Exception in ASGI" not in log


def test_too_many_connections_are_answered_503_and_closed(strict):
    """Last on this server: of 9 idle sockets one at least is over the cap of 8 and answered 503 at
    once (more if earlier tests' sockets are still closing); the others wait for headers (60 s)."""
    socks = [connect(strict) for _ in range(9)]
    try:
        ready, _, _ = select.select(socks, [], [], PATIENCE_S)
        assert ready and all(read_until_closed(s).startswith(b"HTTP/1.1 503 ") for s in ready)
    finally:
        for s in socks:
            s.close()
