"""The errkb web service: REST API under /v1, the paste page at /, record pages at /errors/ID."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from errkb.api import routes, web
from errkb.api.models import MAX_TEXT_BYTES
from errkb.kb import KnowledgeBase

log = logging.getLogger("errkb.api")
MAX_BODY_BYTES = 8 * MAX_TEXT_BYTES  # JSON escaping can grow text; anything far beyond is refused unread


class RefuseHugeBodies:
    """Answer 413 before reading a body whose declared length is far beyond any paste.

    A plain ASGI middleware: Starlette's BaseHTTPMiddleware would wrap every request
    (and its body stream) in extra tasks, a cost paid on every call."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            length = Headers(scope=scope).get("content-length")
            if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
                response = JSONResponse({"detail": f"request body is {length} bytes; the limit is {MAX_BODY_BYTES}"}, 413)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(data_dir: Path | None = None, kb: KnowledgeBase | None = None) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI):
        app.state.kb = kb or KnowledgeBase.load(data_dir)
        yield

    app = FastAPI(title="errkb", version="0.1.0", lifespan=lifespan,
                  description="A verified knowledge base of GPU attention-backend errors.")

    @app.exception_handler(RequestValidationError)
    async def clear_422(request: Request, exc: RequestValidationError):
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        return JSONResponse({"detail": f"invalid request: {problems}"}, 422)

    @app.exception_handler(Exception)
    async def never_500_silently(request: Request, exc: Exception):  # a bug, reported plainly and logged
        log.exception("unhandled error on %s", request.url.path)
        return JSONResponse({"detail": "internal error; it has been logged"}, 500)

    app.add_middleware(RefuseHugeBodies)
    app.include_router(routes.router)
    app.include_router(web.router)
    app.mount("/static", StaticFiles(directory=Path(__file__).parent / "static"), name="static")
    return app
