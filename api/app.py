"""The errkb web service: REST API under /v1, the paste page at /, record pages at /errors/ID."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles

from errkb.api import routes, web
from errkb.api.models import MAX_TEXT_BYTES
from errkb.kb import KnowledgeBase

log = logging.getLogger("errkb.api")
MAX_BODY_BYTES = 8 * MAX_TEXT_BYTES  # JSON escaping can grow text; anything far beyond is refused unread


def create_app(data_dir: Path | None = None, kb: KnowledgeBase | None = None) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI):
        app.state.kb = kb or KnowledgeBase.load(data_dir)
        yield

    app = FastAPI(title="errkb", version="0.1.0", lifespan=lifespan,
                  description="A verified knowledge base of GPU attention-backend errors.")

    @app.middleware("http")
    async def refuse_huge_bodies(request: Request, call_next):
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
            return JSONResponse({"detail": f"request body is {length} bytes; the limit is {MAX_BODY_BYTES}"}, 413)
        return await call_next(request)

    @app.exception_handler(RequestValidationError)
    async def clear_422(request: Request, exc: RequestValidationError):
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        return JSONResponse({"detail": f"invalid request: {problems}"}, 422)

    @app.exception_handler(Exception)
    async def never_500_silently(request: Request, exc: Exception):  # a bug, reported plainly and logged
        log.exception("unhandled error on %s", request.url.path)
        return JSONResponse({"detail": "internal error; it has been logged"}, 500)

    app.include_router(routes.router)
    app.include_router(web.router)
    app.mount("/static", StaticFiles(directory=Path(__file__).parent / "static"), name="static")
    return app
