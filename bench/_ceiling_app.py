"""The API benchmark's ceiling: errkb's app with one change, its knowledge base answers every
paste with a fixed body of /v1/match's mean size instead of matching. The request goes through
the same route, reader and response as a real /v1/match, so the gap between this ceiling and
/v1/match is matching alone. Bench-only: never part of the served API."""

from __future__ import annotations

import os

from errkb.api.app import create_app
from errkb.dataset import Dataset
from errkb.kb import KnowledgeBase

_FILL = int(os.environ.get("ERRKB_BENCH_BODY_BYTES", "1500")) - 56  # the JSON around the filler
_BODY = ('{"matches":[{"id":"-","kind":"site","matched_text":"' + "x" * max(_FILL, 0) + '"}]}').encode()


class NoMatching(KnowledgeBase):
    def match_json(self, text: str, limit: int = 5, project: str = "") -> bytes:
        return _BODY


app = create_app(kb=NoMatching(Dataset.load()))
