"""The OpenAPI document is true: every error answer has the documented Problem shape, and
schemathesis (all its checks) finds nothing in a bounded, seeded run. In process, no clock."""

import jsonschema
import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS, load_all_checks

from errkb.api.app import create_app
from errkb.kb import KnowledgeBase

# The document alone (no knowledge base needed to write it); the app under test comes from a fixture.
DOCUMENT = create_app().openapi()
schema = schemathesis.openapi.from_dict(DOCUMENT)
schema.app = create_app()  # picks the in-process transport; each call passes the fixture's app


@pytest.fixture(scope="module")
def app(dataset):
    app = create_app(kb=KnowledgeBase(dataset))
    with TestClient(app):  # runs the lifespan once
        yield app


@pytest.fixture(scope="module")
def client(app):
    return TestClient(app)


def documented(path: str, method: str, status: int) -> dict:
    """The JSON schema the document gives for one answer, its references resolved."""
    answer = DOCUMENT["paths"][path][method]["responses"][str(status)]
    return {**answer["content"]["application/json"]["schema"], "components": DOCUMENT["components"]}


def test_every_documented_error_is_a_problem():
    problem = {"$ref": "#/components/schemas/Problem"}
    errors = {(path, method, status): answer.get("content", {}).get("application/json", {}).get("schema")
              for path, operations in DOCUMENT["paths"].items() for method, op in operations.items()
              for status, answer in op["responses"].items() if int(status) >= 400}
    assert errors and all(s == problem for s in errors.values()), errors
    assert "HTTPValidationError" not in DOCUMENT["components"]["schemas"]


@pytest.mark.parametrize("path, method, status, request_args", [
    ("/v1/errors", "get", 422, {"params": {"offset": -1}}),
    ("/v1/sites", "get", 422, {"params": {"offset": -1}}),
    ("/v1/errors", "get", 422, {"params": {"limit": "many"}}),
    ("/v1/errors/{record_id}", "get", 404, {}),
    ("/v1/match", "post", 422, {"content": b"[" * 1000 + b"]" * 1000}),
    ("/v1/match", "post", 413, {"json": {"text": "x" * (64 * 1024 + 1)}}),
])
def test_error_answers_match_the_document(client, path, method, status, request_args):
    url = path.replace("{record_id}", "no-such-record")
    resp = client.request(method.upper(), url, **request_args)
    assert resp.status_code == status
    jsonschema.validate(resp.json(), documented(path, method, status))


@schema.parametrize()
@settings(max_examples=8, derandomize=True, database=None, deadline=None,  # seeded, no clock
          suppress_health_check=list(HealthCheck))
def test_schemathesis_finds_nothing(case, app):
    load_all_checks()
    case.call_and_validate(app=app, checks=CHECKS.get_all())
