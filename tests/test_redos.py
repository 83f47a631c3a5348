"""The linear-time certificate: it refuses the classic catastrophic shapes and certifies every
pattern the matcher derives, the same way on any machine (no clock involved)."""

import pytest

from errkb import redos, templates


@pytest.mark.parametrize("pattern", [
    r"[\w ]*!",        # retries the rest of the text from every position
    r"(a+)+b",         # nested repeats
    r"(?:x*)*y",
    r"(.*?),(.*?)=",   # unbounded lazy values
    r"(?:ab){0,9}c",   # a backtracking repeat of more than one character
    r"(a)\1",          # backreference
    r"(?:ab|a)++c",    # possessive, unbounded, but more than one character per step
])
def test_catastrophic_shapes_are_refused(pattern):
    with pytest.raises(redos.NotLinear):
        redos.step_bound(pattern)


def test_retries_multiply_and_a_loose_bound_is_refused():
    assert redos.step_bound(r"\S{0,3}?x") == 3 + 4 * 1
    assert redos.step_bound(r"\S{0,3}?\S{0,3}?x") == 3 + 4 * (3 + 4 * 1)
    with pytest.raises(redos.NotLinear, match="steps per start"):
        redos.step_bound(r"\S{0,99}?" * 4 + "x")


def test_possessive_runs_never_give_back():
    assert redos.step_bound(r"a\s++b") == 3
    assert redos.step_bound(r"(?:(?!\s*+x)(?:\s++|[^\s])){0,512}+y") == 512 * (2 + 2) + 1


@pytest.mark.parametrize("template", [
    "shape {got}, expected {want}.",
    "{name} must be on CUDA, got {device}",
    "{a}{b}{c}{d} tail {e}",  # a run of placeholders side by side does not multiply retries
    "head_dim {x}",
])
def test_derived_patterns_are_certified(template):
    assert redos.template_step_bound(template) <= redos.STEP_BUDGET


def test_every_shipped_template_is_certified(dataset):
    shipped = {s.template for s in dataset.sites.values()} | {r.template for r in dataset.records}
    refused = []
    for template in shipped:
        try:
            redos.template_step_bound(template)
        except redos.NotLinear as exc:
            refused.append((template, str(exc)))
    assert not refused
