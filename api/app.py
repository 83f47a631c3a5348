"""The errkb web service: REST API under /v1, the paste page at /, record pages at /errors/ID."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import quote

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.routing import Match
from starlette.types import ASGIApp, Receive, Scope, Send

from errkb.api import routes, web
from errkb.api.models import BODY_TIMEOUT_S, MAX_BODY_BYTES
from errkb.kb import KnowledgeBase

__all__ = ["create_app", "MAX_BODY_BYTES"]

log = logging.getLogger("errkb.api")
# Swagger UI's and ReDoc's files, shipped by the fastapi-offline package: /docs works without internet.
DOCS_ASSETS = Path(fastapi_offline.__file__).parent / "static"


class RefuseHugeBodies:
    """Answer 413 before reading a body whose declared length is far beyond any paste (a body
    without a declared length, chunked, is counted as it is read: models.read_body).

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


def _without_slash(request: Request) -> str | None:
    """Where a 404 on '/v1/health/' should point: the same path without its trailing slash, when
    a route serves that, as a relative URL. Starlette's own slash redirect (turned off) writes an
    absolute URL from the Host header, which a client chooses."""
    path = request.scope["path"]
    stripped = path.rstrip("/")
    if path == stripped or not stripped or stripped.startswith("//"):  # '//host' would leave the site
        return None
    scope = {**request.scope, "path": stripped}
    if not any(route.matches(scope)[0] != Match.NONE for route in request.app.router.routes):
        return None
    query = request.scope.get("query_string", b"").decode("latin-1")
    return quote(stripped) + (f"?{query}" if query else "")


def create_app(data_dir: Path | None = None, kb: KnowledgeBase | None = None,
               body_timeout_s: float = BODY_TIMEOUT_S) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI):
        app.state.kb = kb or KnowledgeBase.load(data_dir)
        yield

    app = FastAPI(title="errkb", version="0.1.0", lifespan=lifespan, redirect_slashes=False,
                  docs_url=None, redoc_url=None,
                  description="A verified knowledge base of GPU attention-backend errors.")
    app.state.body_timeout_s = body_timeout_s

    @app.exception_handler(RequestValidationError)
    async def clear_422(request: Request, exc: RequestValidationError):
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        return JSONResponse({"detail": f"invalid request: {problems}"}, 422)

    @app.exception_handler(StarletteHTTPException)
    async def relative_slash_redirect(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 404 and (target := _without_slash(request)):
            return RedirectResponse(target, 307)
        return await http_exception_handler(request, exc)

    @app.exception_handler(ClientDisconnect)
    async def client_gone(request: Request, exc: ClientDisconnect):  # not a bug: one line, no traceback
        client = f"{request.client.host}:{request.client.port}" if request.client else "a client"
        log.info("%s disconnected before its request was read: %s %s", client, request.method, request.url.path)
        return Response(status_code=499)  # nobody reads it; the server drops it

    @app.exception_handler(Exception)
    async def never_500_silently(request: Request, exc: Exception):  # a bug, reported plainly and logged
        log.exception("unhandled error on %s", request.url.path)
        return JSONResponse({"detail": "internal error; it has been logged"}, 500)

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(openapi_url=f"{root}{app.openapi_url}", title="errkb API",
                                   swagger_js_url=f"{root}/static/docs/swagger-ui-bundle.js",
                                   swagger_css_url=f"{root}/static/docs/swagger-ui.css",
                                   swagger_favicon_url=f"{root}/static/docs/favicon.png",
                                   swagger_ui_parameters={"validatorUrl": None})  # no badge from validator.swagger.io

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(openapi_url=f"{root}{app.openapi_url}", title="errkb API",
                              redoc_js_url=f"{root}/static/docs/redoc.standalone.js",
                              redoc_favicon_url=f"{root}/static/docs/favicon.png", with_google_fonts=False)

    app.add_middleware(RefuseHugeBodies)
    app.include_router(routes.router)
    app.include_router(web.router)
    app.mount("/static/docs", StaticFiles(directory=DOCS_ASSETS), name="docs-assets")
    app.mount("/static", StaticFiles(directory=Path(__file__).parent / "static"), name="static")
    return app
