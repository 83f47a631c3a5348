"""Request and response models of the REST API, so /docs is exact."""

from __future__ import annotations

import json
from typing import Literal

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field, ValidationError
from starlette.requests import ClientDisconnect

from errkb.model import RecordDetail, Site

MAX_TEXT_BYTES = 64 * 1024


class MatchRequest(BaseModel):
    text: str = Field(description="An error message, a log line or a whole console dump (at most 64 KiB).")
    limit: int = Field(default=5, ge=1, le=50)


async def read_match_request(request: Request) -> MatchRequest:
    """POST /v1/match's body, validated by pydantic straight from its JSON bytes: one call in
    place of FastAPI's generic body handling (decode to dicts, then validate), which costs as
    much as matching a short paste. Errors are FastAPI's own 422s, located in the body."""
    raw = await _body(request)
    try:
        return MatchRequest.model_validate_json(raw)
    except ValidationError as exc:
        problem = exc
    try:  # pydantic's JSON reader refuses a lone surrogate (half an emoji) that json reads
        return MatchRequest.model_validate(json.loads(raw))
    except ValueError:  # json's errors and pydantic's ValidationError alike
        raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in problem.errors()]) from None


async def _body(request: Request) -> bytes:
    """The request body, read straight from the ASGI channel. Starlette's Request.body goes
    through an async generator, which the event loop hooks and tracks: that cost as much as
    validating the body. Disconnects end the request as Starlette's own reader does."""
    chunks = []
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


# The body as /docs shows it: the route reads it itself (read_match_request), so FastAPI
# cannot derive this from the signature.
MATCH_REQUEST_DOC = {"requestBody": {"required": True,
                                     "content": {"application/json": {"schema": MatchRequest.model_json_schema()}}}}


class MatchOut(BaseModel):
    id: str
    kind: Literal["record", "site"]
    score: float
    span: tuple[int, int] = Field(description="Start and end offsets of the matched text in the input.")
    matched_text: str
    params: dict[str, str] = Field(description="Parameter values read from the message, e.g. head_size=88.")
    template: str
    packages: list[str]
    versions: dict[str, list[str]] = Field(description="Harvested versions that emit this message, per package.")
    why: list[str]
    record: RecordDetail | None = None
    site: Site | None = None


class MatchResponse(BaseModel):
    matches: list[MatchOut]


class Health(BaseModel):
    status: Literal["ok"]
    records: int
    sites: int
    templates: int
    dataset_version: str


class RecordList(BaseModel):
    total: int
    items: list[RecordDetail]


class SiteList(BaseModel):
    total: int
    items: list[Site]


class BackendOut(BaseModel):
    name: str
    records: int


class Problem(BaseModel):
    detail: str
