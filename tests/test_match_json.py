"""/v1/match's JSON has one writer (errkb.match_json.MatchJsonWriter, hand-assembled for speed)
and one declared shape (errkb.api.models.MatchResponse, whose serialization schema is what /docs
shows): on every real paste the bytes must fit that schema exactly and say what the matcher's
Match objects say."""

import json
from pathlib import Path

import jsonschema
import pytest

from errkb import wild
from errkb.api.models import MatchResponse
from errkb.kb import KnowledgeBase

EVAL = Path(__file__).parent / "eval" / "pastes"


@pytest.fixture(scope="module")
def kb(dataset):
    return KnowledgeBase(dataset)


def real_pastes() -> list[str]:
    return [wild.paste_text(label) for label in wild.load_labels()] + [p.read_text() for p in sorted(EVAL.glob("*.txt"))]


def test_the_declared_schema_refuses_members_it_does_not_declare():
    validator = jsonschema.Draft202012Validator(MatchResponse.model_json_schema(mode="serialization"))
    assert not validator.is_valid({"matches": [], "extra": 1})


def test_the_match_json_fits_the_response_model_and_agrees_with_the_matcher_and_the_cache(kb, data_dir):
    """Every real paste, once: the API's bytes fit the declared schema and say what the matcher's
    Match objects say, and `errkb explain`'s on-disk cache (errkb.index_cache), read back from disk,
    gives the same bytes (same candidates, same ranking, same JSON). One pass, because each pass
    over the ~5,700 pastes costs seconds of CI's two cores."""
    from errkb import index_cache
    from errkb.lookup import Lookup

    index_cache.load(data_dir)  # writes the cache when this run has none yet
    cached = Lookup.load(data_dir)
    assert cached.index.dataset is None  # read back, not rebuilt
    validator = jsonschema.Draft202012Validator(MatchResponse.model_json_schema(mode="serialization"))
    answered, checked = 0, set()
    for text in real_pastes():
        raw = kb.match_json(text, 5)
        assert cached.match_json(text, 5) == raw, text[:200]
        body = json.loads(raw)
        if fresh := {m["id"] for m in body["matches"]} - checked:  # each record's JSON is checked once
            problems = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(body)]
            assert not problems, problems[:3]
            checked |= fresh
        expected = kb.index.match(text, limit=5)
        assert [(m["id"], m["kind"], tuple(m["span"]), m["params"], m["why"]) for m in body["matches"]] == \
               [(m.id, m.kind, m.span, m.params, m.why) for m in expected]
        for out, match in zip(body["matches"], expected):
            assert out["score"] == round(match.score, 4) and out["template"] == match.template
            assert (out["record"] is None) == (match.kind != "record") and (out["site"] is None) == (match.kind != "site")
        answered += bool(body["matches"])
    assert answered >= 200
