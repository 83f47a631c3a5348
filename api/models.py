"""Request and response models of the REST API, so /docs is exact."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from errkb.model import RecordDetail, Site

MAX_TEXT_BYTES = 64 * 1024


class MatchRequest(BaseModel):
    text: str = Field(description="An error message, a log line or a whole console dump (at most 64 KiB).")
    limit: int = Field(default=5, ge=1, le=50)


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
