"""The REST API through FastAPI's test client (the browser test runs the real server)."""

import pytest
from fastapi.testclient import TestClient

from errkb.api.app import create_app
from errkb.kb import KnowledgeBase


@pytest.fixture(scope="module")
def client(dataset):
    with TestClient(create_app(kb=KnowledgeBase(dataset))) as c:
        yield c


def test_health_reports_counts_and_version(client, dataset):
    body = client.get("/v1/health").json()
    assert body["status"] == "ok"
    assert body["records"] == len(dataset.records) and body["sites"] == len(dataset.sites)
    assert body["dataset_version"]


def test_match_returns_records_with_their_details(client):
    body = client.post("/v1/match", json={"text": "AssertionError: SplitKV not supported on SM 9.0", "limit": 3}).json()
    first = body["matches"][0]
    assert first["kind"] == "record" and first["record"]["id"] == first["id"]
    assert first["record"]["raised_at"][0]["path"].endswith("interface.py")
    assert first["record"]["affected"]


def test_oversized_text_is_413(client):
    resp = client.post("/v1/match", json={"text": "x" * (64 * 1024 + 1)})
    assert resp.status_code == 413 and "64 KiB" in resp.json()["detail"]


@pytest.mark.parametrize("body", [b"{not json", b'{"txt": "x"}', b'{"text": 5}', b'{"text": "x", "limit": 0}', b"[]"])
def test_malformed_bodies_are_422_with_a_reason(client, body):
    resp = client.post("/v1/match", content=body, headers={"content-type": "application/json"})
    assert resp.status_code == 422 and resp.json()["detail"].startswith("invalid request:")


def test_match_reads_json_whatever_the_content_type(client):
    resp = client.post("/v1/match", content=b'{"text": "AssertionError: SplitKV not supported on SM 9.0"}',
                       headers={"content-type": "application/x-www-form-urlencoded"})
    assert resp.status_code == 200 and "splitkv" in resp.json()["matches"][0]["id"]


@pytest.mark.parametrize("text", ["", "\x00\x01\x02", "\ud800 lone surrogate", "{" * 5000, "\n" * 60000,
                                  "é" * 20000, "[rank0]: " * 3000, "File \"x\", line 1\n" * 2000,
                                  "File \"x\", line " + "9" * 5000, "Exception raised from f at a.cpp:" + "9" * 5000])
def test_odd_user_text_never_500s(client, text):
    import json
    resp = client.post("/v1/match", content=json.dumps({"text": text}), headers={"content-type": "application/json"})
    assert resp.status_code in (200, 413)


def test_record_has_etag_and_honours_if_none_match(client):
    first = client.get("/v1/errors/sglang-fa4-kvcache-batch-idx-leftpad")
    assert first.status_code == 200 and first.headers["etag"]
    again = client.get("/v1/errors/sglang-fa4-kvcache-batch-idx-leftpad", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304


def test_unknown_record_is_404(client):
    assert client.get("/v1/errors/no-such-thing").status_code == 404


def test_record_listing_filters(client, dataset):
    body = client.get("/v1/errors", params={"backend": "fa4", "limit": 200}).json()
    assert body["total"] == sum(1 for r in dataset.records if "fa4" in r.backends)
    assert client.get("/v1/errors", params={"package": "vllm", "version": "0.33.0"}).json()["total"] > 0
    assert client.get("/v1/errors", params={"q": "zzzz-no-such-word"}).json()["total"] == 0


def test_site_listing_and_backends(client):
    sites = client.get("/v1/sites", params={"package": "flash-attn-4", "q": "SplitKV"}).json()
    assert sites["total"] >= 1 and all(s["package"] == "flash-attn-4" for s in sites["items"])
    names = [b["name"] for b in client.get("/v1/backends").json()]
    assert "fa4" in names


def test_pages_and_docs_are_served(client):
    assert "paste" in client.get("/").text.lower()
    page = client.get("/errors/sglang-fa4-kvcache-batch-idx-leftpad")
    assert page.status_code == 200 and "non-consecutive batch indices" in page.text
    assert client.get("/errors/nope").status_code == 404
    assert client.get("/openapi.json").json()["paths"]["/v1/match"]
