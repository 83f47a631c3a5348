"""Accuracy on real pastes from GitHub issues (tests/eval/labels.json): top-1 must stay >= 90%."""

from pathlib import Path

from errkb.evaluate import evaluate, summary

EVAL_DIR = Path(__file__).parent / "eval"


def test_labels_point_at_real_ids(dataset):
    import json
    known = set(dataset.records_by_id) | set(dataset.sites)
    for label in json.loads((EVAL_DIR / "labels.json").read_text()):
        for rid in filter(None, [label["expected"], *label.get("also_ok", [])]):
            assert rid in known, f"{label['file']}: {rid} is neither a record nor a site"


def test_top1_accuracy_on_real_pastes(index):
    outcomes = evaluate(index, EVAL_DIR)
    s = summary(outcomes)
    assert s["pastes"] >= 40 and s["negatives"] >= 5
    misses = [f"{o.file}: expected {o.expected}, got {o.got}" for o in outcomes if not o.top1]
    assert s["top1"] >= 0.90, "\n".join(misses)


def test_pastes_without_a_known_error_get_no_match(index):
    outcomes = evaluate(index, EVAL_DIR)
    assert all(o.top1 for o in outcomes if o.expected is None)
