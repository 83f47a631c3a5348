"""The benchmarks' own pieces still fit the code they measure: bench/ is run by hand, not by
make test, so a changed signature would otherwise surface only at the next measurement."""

import importlib.util
from pathlib import Path

from fastapi.testclient import TestClient

BENCH = Path(__file__).resolve().parent.parent / "bench"


def test_the_api_benchmarks_ceiling_app_takes_every_match_request_the_real_one_takes():
    spec = importlib.util.spec_from_file_location("ceiling_app", BENCH / "_ceiling_app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with TestClient(module.app) as client:
        for body in ({"text": "x"}, {"text": "x", "limit": 3, "project": "flash-attn"}):
            resp = client.post("/v1/match", json=body)
            assert resp.status_code == 200 and resp.content == module._BODY, (body, resp.text)
