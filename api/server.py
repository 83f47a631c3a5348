"""`errkb serve`: uvicorn with limits that hold against hostile clients.

uvicorn (0.55) bounds none of these by itself: the time a client takes to send a request's line
and headers (its keep-alive timer starts only after a first response, and stops at a request's
first byte), the size of those headers (httptools has no limit), the number of open sockets
(limit_concurrency answers 503 to requests, yet accepts and keeps every socket), or a body that
the app never reads (read and thrown away for as long as the client sends it). The protocol class
below adds those four; a body the app reads is bounded in size and time by the app itself
(errkb.api.models.read_body: 413, 408), which knows the route.

Imports nothing heavy at the top: the CLI reads Limits to build its --help."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio


@dataclass(frozen=True)
class Limits:
    header_timeout_s: float = 10.0  # request line and headers, from the connection (or the request's first byte)
    body_timeout_s: float = 30.0  # a POST /v1/match body, from the route's first read
    keep_alive_s: float = 5.0  # an idle connection between requests
    max_connections: int = 512  # open sockets; one more is answered 503 and closed unread
    max_header_bytes: int = 64 * 1024  # request line and headers
    linger_s: float = 2.0  # after answering without reading the whole body: discard what comes, then close


def _plain(status: int, reason: str, text: str) -> bytes:
    body = text.encode()
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body


def guarded_protocol(limits: Limits) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol with the limits above, as a class for uvicorn's `http=`."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    busy = _plain(503, "Service Unavailable", "too many connections; try again shortly")
    too_large = _plain(431, "Request Header Fields Too Large",
                       f"request line and headers over {limits.max_header_bytes} bytes")
    late = _plain(408, "Request Timeout", f"request headers not received within {limits.header_timeout_s:g} s")

    class GuardedHttpToolsProtocol(HttpToolsProtocol):
        refused_logged_at = float("-inf")  # refusals are logged once a minute, not once a socket

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.header_timer: asyncio.TimerHandle | None = None
            self.linger_timer: asyncio.TimerHandle | None = None
            self.in_headers = False  # between a request's first byte and the end of its headers
            self.messages = 0  # requests begun on this connection
            self.header_bytes = 0
            self.lingering = False

        # Connections: at most max_connections open; one more is answered 503 and closed unread.
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            if len(self.connections) >= limits.max_connections:
                self.transport = transport  # connection_lost reads it
                self.lingering = True  # nothing it sends is read
                if self.loop.time() - GuardedHttpToolsProtocol.refused_logged_at >= 60:
                    GuardedHttpToolsProtocol.refused_logged_at = self.loop.time()
                    self.logger.warning("%d connections open, the limit: refusing new ones", limits.max_connections)
                transport.write(busy)
                transport.close()
                return
            super().connection_made(transport)
            self._arm_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            for timer in (self.header_timer, self.linger_timer):
                if timer is not None:
                    timer.cancel()
            self.header_timer = self.linger_timer = None
            super().connection_lost(exc)

        # Request line and headers: within header_timeout_s and (give or take one read) max_header_bytes.
        def _arm_header_timer(self) -> None:
            if self.header_timer is None:
                self.header_timer = self.loop.call_later(limits.header_timeout_s, self._headers_late)

        def _headers_late(self) -> None:
            self.header_timer = None
            if self.transport.is_closing() or self.lingering:
                return
            if self.cycle is None or self.cycle.response_complete:  # not in the middle of another answer
                self.transport.write(late)
            self.transport.close()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self.in_headers = True
            self.messages += 1
            self.header_bytes = 0
            self._arm_header_timer()

        def on_headers_complete(self) -> None:
            self.in_headers = False
            if self.header_timer is not None:
                self.header_timer.cancel()
                self.header_timer = None
            super().on_headers_complete()

        def data_received(self, data: bytes) -> None:
            if self.lingering:
                return
            before = (self.in_headers, self.messages)
            super().data_received(data)
            # httptools keeps headers without a bound. Count a read when it is all headers: the same
            # request was in its headers before it and still is after (the read a request begins in
            # is not counted: the slack of one read).
            if before == (True, self.messages) and self.in_headers and not self.transport.is_closing():
                self.header_bytes += len(data)
                if self.header_bytes > limits.max_header_bytes:
                    self.transport.write(too_large)
                    self._linger()

        # A body the app did not read (a refused POST, a GET with a body): after the answer, stop
        # the connection rather than read it for as long as the client sends.
        def on_response_complete(self) -> None:
            unread = self.cycle is not None and self.cycle.response_complete and self.cycle.more_body
            super().on_response_complete()
            if unread and not self.transport.is_closing():
                self._linger()

        def _linger(self) -> None:
            """Close after an answer the client may still be sending into: half-close, then read and
            discard for linger_s, so that the client reads the answer, not a reset."""
            self._unset_keepalive_if_required()
            if self.header_timer is not None:
                self.header_timer.cancel()
                self.header_timer = None
            self.lingering = True
            if self.transport.can_write_eof():
                self.transport.write_eof()
            self.linger_timer = self.loop.call_later(limits.linger_s, self.transport.close)

    return GuardedHttpToolsProtocol


def log_config(level: str = "info") -> dict:
    """uvicorn's logging, with errkb's own loggers (errkb.api: client disconnects, errors) beside it."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["errkb"] = {"handlers": ["default"], "level": level.upper(), "propagate": False}
    return config


def config(data_dir: Path | None = None, host: str = "127.0.0.1", port: int = 8000,
           limits: Limits = Limits(), log_level: str = "info", configure_logging: bool = True):
    """The uvicorn.Config that `errkb serve` runs (it sets up the process's logging unless told not to)."""
    import uvicorn

    from errkb.api.app import create_app

    return uvicorn.Config(
        create_app(data_dir, body_timeout_s=limits.body_timeout_s), host=host, port=port,
        http=guarded_protocol(limits), timeout_keep_alive=limits.keep_alive_s,
        # The protocol caps sockets at max_connections; uvicorn's own check (503 once connections or
        # running requests reach the number) then only caps requests, as a second line.
        limit_concurrency=limits.max_connections + 1,
        log_level=log_level, log_config=log_config(log_level) if configure_logging else None)


def serve(data_dir: Path | None = None, host: str = "127.0.0.1", port: int = 8000,
          limits: Limits = Limits(), log_level: str = "info") -> None:
    import uvicorn

    uvicorn.Server(config(data_dir, host, port, limits, log_level)).run()
