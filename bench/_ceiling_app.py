"""The API benchmark's ceiling: errkb's app plus one route that does everything /v1/match does
except matching (the same request model, a response of the same size), so the benchmark can say
how much of the gap between /v1/match and /v1/health matching itself accounts for.
Bench-only: never part of the served API."""

from __future__ import annotations

import os

from fastapi import Depends, Request, Response

from errkb.api.app import create_app
from errkb.api.deps import get_kb
from errkb.api.models import read_match_request
from errkb.kb import KnowledgeBase

app = create_app()
_FILL = int(os.environ.get("ERRKB_BENCH_BODY_BYTES", "1500")) - 56  # the JSON around the filler
_BODY = ('{"matches":[{"id":"-","kind":"site","matched_text":"' + "x" * max(_FILL, 0) + '"}]}').encode()


@app.post("/bench/no-matching")
async def no_matching(request: Request, kb: KnowledgeBase = Depends(get_kb)) -> Response:
    await read_match_request(request)
    return Response(_BODY, media_type="application/json")
