"""Request and response models of the REST API, so /docs is exact."""

from __future__ import annotations

import asyncio
import json
from typing import Literal

from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import ClientDisconnect

from errkb.model import RecordDetail, Site
from errkb.projects import MAX_PROJECT_CHARS

MAX_TEXT_BYTES = 64 * 1024
MAX_BODY_BYTES = 8 * MAX_TEXT_BYTES  # JSON escaping can grow text; anything far beyond is refused
BODY_TIMEOUT_S = 30.0  # the default time a client has to send a body (create_app's body_timeout_s)


class MatchRequest(BaseModel):
    text: str = Field(description="An error message, a log line or a whole console dump (at most 64 KiB).")
    limit: int = Field(default=5, ge=1, le=50)
    project: str = Field(default="", max_length=MAX_PROJECT_CHARS, description=(
        "Optional: the kernel library the paste comes from, as a package name (flash-attn, flashinfer, xformers, "
        "sgl-kernel) or a GitHub address inside its repository (an issue's URL). A bare line several libraries "
        "print then answers with that library's record. Frameworks and engines (torch, Triton, transformers, "
        "vLLM, SGLang) name no library here: their pastes must show the kernel themselves."))


async def read_match_request(request: Request) -> MatchRequest:
    """POST /v1/match's body, validated by pydantic straight from its JSON bytes: one call in
    place of FastAPI's generic body handling (decode to dicts, then validate), which costs as
    much as matching a short paste. Errors are FastAPI's own 422s, located in the body."""
    raw = await read_body(request)
    try:
        return MatchRequest.model_validate_json(raw)
    except ValidationError as exc:
        problem = exc
    if any("recursion limit" in e["msg"] for e in problem.errors()):  # nested too deep: json would recurse too
        raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in problem.errors()])
    try:  # pydantic's JSON reader refuses a lone surrogate (half an emoji) that json reads
        return MatchRequest.model_validate(json.loads(raw))
    except (ValueError, RecursionError):  # json's errors, pydantic's ValidationError, nesting past the stack
        raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in problem.errors()]) from None


async def read_body(request: Request) -> bytes:
    """The request body, read straight from the ASGI channel. Starlette's Request.body goes
    through an async generator, which the event loop hooks and tracks: that cost as much as
    validating the body. The bytes are counted as they come, chunked bodies included: past
    MAX_BODY_BYTES reading stops with a 413. The whole body must arrive within the app's
    body_timeout_s (408). Disconnects end the request as Starlette's own reader does."""
    chunks = []
    size = 0
    timeout_s = request.app.state.body_timeout_s
    try:
        async with asyncio.timeout(timeout_s):
            while True:
                message = await request.receive()
                if message["type"] == "http.disconnect":
                    raise ClientDisconnect()
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise HTTPException(413, f"request body is over the limit of {MAX_BODY_BYTES} bytes: "
                                             "paste the error and its traceback only")
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
    except TimeoutError:
        raise HTTPException(408, f"request body not received within {timeout_s:g} s") from None


# The body as /docs shows it: the route reads it itself (read_match_request), so FastAPI
# cannot derive this from the signature.
MATCH_REQUEST_DOC = {"requestBody": {"required": True,
                                     "content": {"application/json": {"schema": MatchRequest.model_json_schema()}}}}


class MatchOut(BaseModel):
    model_config = ConfigDict(extra="forbid")  # the schema /docs shows says: nothing else

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


class EvidenceOut(BaseModel):
    contains: str
    package: str


class WithheldOut(BaseModel):
    id: str = Field(description="A record whose message the paste holds but which answers only when the paste names its library.")
    needs: list[EvidenceOut] = Field(description="Text any one of which, in the paste, would let it answer.")


class ProjectOut(BaseModel):
    text: str = Field(description="The request's project, as given.")
    packages: list[str] = Field(description="The packages it was read as naming; empty when errkb does not know it.")


class MatchResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")

    matches: list[MatchOut]
    withheld: list[WithheldOut] = Field(default=[], description=(
        "Only when nothing matched: records whose message the paste holds but that need the paste to name "
        "the library (a bare CUDA error line); not matches. Absent when there are matches."))
    project: ProjectOut | None = Field(default=None, description="Only when the request gave a project: how it was read.")


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
