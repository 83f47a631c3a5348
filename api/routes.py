"""The /v1 REST resources. Route functions only call errkb's core."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response

from errkb.api.deps import get_kb
from errkb.api.models import (MATCH_REQUEST_DOC, MAX_TEXT_BYTES, BackendOut, Health, MatchResponse, Problem,
                              RecordList, SiteList, read_match_request)
from errkb.kb import KnowledgeBase
from errkb.model import RecordDetail

router = APIRouter(prefix="/v1")
# Every error answer is a Problem ({"detail": str}), 422 included: the app's RequestValidationError
# handler writes one sentence where FastAPI would write (and document) a list of errors.
INVALID = {422: {"model": Problem, "description": "Invalid request"}}


@router.get("/health", response_model=Health, tags=["meta"])
async def health(kb: KnowledgeBase = Depends(get_kb)) -> Health:
    return Health(status="ok", records=len(kb.details), sites=len(kb.dataset.sites),
                  templates=kb.template_count, dataset_version=kb.version)


@router.post("/match", response_model=MatchResponse, tags=["lookup"], openapi_extra=MATCH_REQUEST_DOC,
             responses={**INVALID, 408: {"model": Problem, "description": "Body not received in time"},
                        413: {"model": Problem, "description": "Body or text over the limit"}})
async def match(request: Request, kb: KnowledgeBase = Depends(get_kb)) -> Response:
    body = await read_match_request(request)
    # CPU-bound and sub-millisecond: run inline rather than hopping to a thread.
    size = len(body.text.encode("utf-8", "surrogatepass"))
    if size > MAX_TEXT_BYTES:
        raise HTTPException(413, f"text is {size} bytes; the limit is {MAX_TEXT_BYTES} (64 KiB): paste the error and its traceback only")
    return Response(kb.match_json(body.text, body.limit, body.project), media_type="application/json")


@router.get("/errors/{record_id}", response_model=RecordDetail, tags=["records"],
            responses={**INVALID, 404: {"model": Problem, "description": "No such record"},
                       304: {"description": "Not modified (ETag)"}})
def get_error(record_id: str, request: Request, response: Response, kb: KnowledgeBase = Depends(get_kb)):
    if record_id not in kb.details:
        raise HTTPException(404, f"no record with id {record_id!r}")
    etag = kb.etag(record_id)
    headers = {"ETag": etag, "Cache-Control": "public, max-age=300"}
    if etag in {t.strip() for t in request.headers.get("if-none-match", "").split(",")}:
        return Response(status_code=304, headers=headers)
    response.headers.update(headers)
    return kb.details[record_id]


@router.get("/errors", response_model=RecordList, tags=["records"], responses=INVALID)
def list_errors(q: str | None = None, backend: str | None = None, package: str | None = None,
                version: str | None = None, error_class: str | None = None, tag: str | None = None,
                limit: int = Query(20, ge=1, le=200), offset: int = Query(0, ge=0),
                kb: KnowledgeBase = Depends(get_kb)) -> RecordList:
    found = kb.find_records(q, backend, package, version, error_class, tag)
    return RecordList(total=len(found), items=found[offset:offset + limit])


@router.get("/sites", response_model=SiteList, tags=["sites"], responses=INVALID)
def list_sites(q: str | None = None, package: str | None = None, version: str | None = None,
               kind: str | None = None, error_class: str | None = None,
               limit: int = Query(20, ge=1, le=200), offset: int = Query(0, ge=0),
               kb: KnowledgeBase = Depends(get_kb)) -> SiteList:
    found = kb.find_sites(q, package, version, kind, error_class)
    return SiteList(total=len(found), items=found[offset:offset + limit])


@router.get("/backends", response_model=list[BackendOut], tags=["records"])
def backends(kb: KnowledgeBase = Depends(get_kb)) -> list[BackendOut]:
    return [BackendOut(name=name, records=n) for name, n in kb.backends().items()]
