"""The REST API through FastAPI's test client (the browser test runs the real server)."""

import json

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


# Hostile clients, in process: the server-level limits (header timeout, connection cap) are in
# test_api_server.py, against a real `errkb serve`.

def asgi_request(app, method: str, path: str, receive, headers=()) -> tuple[int, dict, bytes]:
    """One request straight through the ASGI interface, with the test's own `receive`."""
    import asyncio

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"host", b"testserver"), *headers], "client": ("127.0.0.1", 5000),
             "server": ("127.0.0.1", 8000), "state": {}}
    sent = []

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], dict(start["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


def test_chunked_body_is_refused_once_past_the_limit_not_read_to_its_end(client):
    from errkb.api.models import MAX_BODY_BYTES

    chunk, offered, taken = b"x" * 65536, 200, []  # 12.5 MiB offered, no Content-Length

    async def receive():
        taken.append(1)
        return {"type": "http.request", "body": chunk, "more_body": len(taken) < offered}

    status, _, body = asgi_request(client.app, "POST", "/v1/match", receive, [(b"transfer-encoding", b"chunked")])
    assert status == 413 and b"limit" in body
    assert len(taken) == MAX_BODY_BYTES // len(chunk) + 1  # stopped at the first chunk past the limit


def test_body_not_sent_in_time_is_408(client):
    import asyncio

    from errkb.api.app import create_app

    app = create_app(kb=client.app.state.kb, body_timeout_s=0.05)
    app.state.kb = client.app.state.kb  # called without its lifespan
    first = True

    async def receive():  # half a body, then nothing ever again
        nonlocal first
        if first:
            first = False
            return {"type": "http.request", "body": b'{"text": "Assert', "more_body": True}
        await asyncio.Event().wait()

    status, _, body = asgi_request(app, "POST", "/v1/match", receive, [(b"content-length", b"100")])
    assert status == 408 and json.loads(body)["detail"].startswith("request body not received")


def test_client_gone_mid_body_is_one_log_line_not_a_traceback(client, caplog):
    messages = [{"type": "http.request", "body": b'{"text": "x', "more_body": True}, {"type": "http.disconnect"}]

    async def receive():
        return messages.pop(0)

    with caplog.at_level("DEBUG"):
        asgi_request(client.app, "POST", "/v1/match", receive, [(b"content-length", b"100")])
    assert [r.getMessage() for r in caplog.records if r.name.startswith("errkb")] == [
        "127.0.0.1:5000 disconnected before its request was read: POST /v1/match"]
    assert not any(r.exc_info for r in caplog.records)


@pytest.mark.parametrize("body", [b"[" * 1000 + b"]" * 1000, b'{"text": ' + b"[" * 1000 + b"]" * 1000 + b"}",
                                  b'{"text": "x", "limit": ' + b'{"a": ' * 1000 + b"1" + b"}" * 1000 + b"}",
                                  b"[" * 200_000])
def test_deeply_nested_json_is_422_not_500(client, body):
    resp = client.post("/v1/match", content=body, headers={"content-type": "application/json"})
    assert resp.status_code == 422 and resp.json()["detail"].startswith("invalid request:")


def test_trailing_slash_redirect_is_relative_whatever_the_host(client):
    resp = client.get("/v1/health/?x=1", headers={"host": "evil.example"}, follow_redirects=False)
    assert resp.status_code == 307 and resp.headers["location"] == "/v1/health?x=1"
    assert client.get("/v1/health/", follow_redirects=True).json()["status"] == "ok"
    assert client.get("/no-such-page/", follow_redirects=False).status_code == 404

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    for path in ("//evil.example/", "//evil.example/v1/health/", "/\\evil.example/"):  # never off the site
        status, headers, _ = asgi_request(client.app, "GET", path, receive)
        assert status == 404 and b"location" not in headers, path


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_only_bundled_files(client, page):
    import re

    html = client.get(page).text
    assert "http:" not in html and "https:" not in html and "//" not in html.replace("<!--", "")
    urls = set(re.findall(r'(?:src|href|spec-url)="([^"]+)"|url: \'([^\']+)\'', html))
    urls = {u for pair in urls for u in pair if u}
    assert {"/openapi.json"} < urls and all(u.startswith("/") for u in urls)
    for url in urls:
        assert client.get(url).status_code == 200, url


def test_match_with_a_project_answers_a_bare_line_and_says_how_it_read_the_project(client):
    line = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    assert client.post("/v1/match", json={"text": line}).json()["matches"] == []
    body = client.post("/v1/match", json={"text": line, "project": "https://github.com/Dao-AILab/flash-attention/issues/986"}).json()
    assert body["matches"][0]["id"] == "fa2-no-kernel-image"
    assert body["project"]["packages"] == ["flash-attn", "flash-attn-4"]
    unknown = client.post("/v1/match", json={"text": line, "project": "vllm"}).json()
    assert unknown["matches"] == [] and unknown["withheld"] and unknown["project"] == {"text": "vllm", "packages": []}
    assert "project" not in client.post("/v1/match", json={"text": line}).json()


def test_an_overlong_or_non_string_project_is_422(client):
    assert client.post("/v1/match", json={"text": "x", "project": "p" * 201}).status_code == 422
    assert client.post("/v1/match", json={"text": "x", "project": ["flash-attn"]}).status_code == 422
