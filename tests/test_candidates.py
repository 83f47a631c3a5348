"""The compiled candidate selection (errkb._candidates) against its plain-Python reference."""

import os
import random
from pathlib import Path

import pytest

from errkb import candidates, templates
from errkb.match import exact_plan, weighted_plan
from errkb.paste import parse

compiled = candidates.compiled
needs_compiled = pytest.mark.skipif(compiled is None, reason="errkb._candidates is not built")
EVAL = Path(__file__).parent / "eval" / "pastes"
VALUES = ["128", "torch.bfloat16", "(2, 4096, 32, 128)", "sm90", "cuda:0", "None", "q_proj", "x", "héad_dîm"]
NOISE = ["INFO 11-29 10:23:39 [runner.py:12] warming up", "[rank1]: Traceback (most recent call last):",
         '  File "/opt/venv/lib/python3.12/site-packages/vllm/attention/layer.py", line 88, in forward',
         "Ünïcode wörds ², ½ and 中文 tokens_9 around"]


def test_the_compiled_selection_is_built():
    """Without it matching still works, at a fraction of the speed: say so instead of passing."""
    if os.environ.get("ERRKB_PURE_PYTHON") == "1":
        pytest.skip("ERRKB_PURE_PYTHON=1 asks for the reference")
    assert compiled is not None, "errkb._candidates did not build (a C compiler and Python headers are needed)"


@pytest.fixture(scope="module")
def pastes(index):
    """Real templates rendered into noisy pastes, some with a word changed, plus the eval pastes."""
    rng = random.Random(5)
    out = [p.read_text() for p in sorted(EVAL.glob("*"))]
    for entry in rng.sample(index.entries, 1500):
        message = templates.render(entry.template, {k: rng.choice(VALUES) for k in templates.placeholders(entry.template)})
        words = message.split()
        if words and rng.random() < 0.4:  # wording drifted: the fuzzy path's input
            words[rng.randrange(len(words))] = rng.choice(["tensor", "value", "Input", "shape"])
            message = " ".join(words)
        out.append("\n".join(rng.sample(NOISE, 2) + [f"ValueError: {message}"]))
    return [parse(text) for text in out]


@needs_compiled
def test_exact_candidates_agree(index, pastes):
    plan = exact_plan(index.entries)
    reference, fast = candidates.PyExactCandidates(plan), candidates.exact_candidates(plan)
    found = 0
    for paste in pastes:
        message = paste.message_text
        expected = reference.find(message, paste.text)
        assert fast.find(message, paste.text) == expected, paste.original
        found += bool(expected)
    assert found > 1000


@needs_compiled
def test_weighted_candidates_agree(index, pastes):
    plan = weighted_plan(index.entries)
    reference, fast = candidates.PyWeightedCandidates(plan), candidates.weighted_candidates(plan)
    for min_coverage in (0.7, 1.0):
        for paste in pastes:
            expected = reference.find(paste.message_text, min_coverage)
            got = fast.find(paste.message_text, min_coverage)
            assert [i for i, _ in got] == [i for i, _ in expected], paste.original
            assert [c for _, c in got] == pytest.approx([c for _, c in expected], abs=1e-12)


@needs_compiled
def test_tokens_are_read_as_python_reads_backslash_w():
    """One entry per token, Unicode letters, digits and numerics among them: an entry is
    covered exactly when its token is one of the text's `\\w+` runs."""
    vocabulary = ["héad", "dîm", "²", "½", "中文", "tokens_9", "wörds", "x", "_", "9", "Ünïcode", "a\u0301b"]
    entry_tokens = [frozenset([t]) for t in vocabulary]
    plan = candidates.ExactPlan.build(entry_tokens, [() for _ in vocabulary], 64)
    reference, fast = candidates.PyExactCandidates(plan), candidates.exact_candidates(plan)
    for text in ["héad-dîm ² ½x 中文,tokens_9", "Ünïcode wörds _ 9 x", "a\u0301b ab a b", "", "²½ x_ _x 9x"]:
        assert fast.find(text, text) == reference.find(text, text), text
    assert {vocabulary[i] for i in fast.find("x ½ 中文 tokens_9 héad-dîm", "")} == {"x", "½", "中文", "tokens_9", "héad", "dîm"}


def test_weighted_candidates_rank_the_most_specific_full_cover_first():
    plan = candidates.WeightedPlan.build([frozenset({"window", "left"}), frozenset({"window", "size", "left"})], 64)
    found = candidates.PyWeightedCandidates(plan).find("window_left: the window left size", 0.5)
    assert [i for i, _ in found] == [1, 0] and found[0][1] == 1.0
