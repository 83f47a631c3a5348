import pytest

from errkb import templates


def test_placeholders_become_named_groups():
    values = templates.fullmatch(
        "head_dim {head_dim} is not supported on sm{arch}", "head_dim 88 is not supported on sm90")
    assert values == {"head_dim": "88", "arch": "90"}


def test_literal_text_must_match():
    assert templates.fullmatch("head_dim {head_dim} is not supported", "head_dim 88 is supported") is None


def test_doubled_braces_are_literal():
    template = "expected {{batch, seqlen}} but got {shape}"
    assert templates.placeholders(template) == ["shape"]
    assert templates.fullmatch(template, "expected {batch, seqlen} but got (2, 3)") == {"shape": "(2, 3)"}


def test_whitespace_runs_are_equivalent():
    assert templates.fullmatch("a  b {x}", "a b\tc") == {"x": "c"}


def test_repeated_placeholder_reuses_the_name():
    assert templates.fullmatch("{x} and {x}", "1 and 1") == {"x": "1"}


def test_positional_fields_are_rejected():
    with pytest.raises(templates.TemplateError):
        templates.parse("value {} is bad")
    with pytest.raises(templates.TemplateError):
        templates.parse("value {q.shape} is bad")


def test_render_round_trips():
    template = "num_splits={n} is not supported on SM{arch}"
    message = templates.render(template, {"n": 4, "arch": 90})
    assert templates.fullmatch(template, message) == {"n": "4", "arch": "90"}


def test_search_pattern_finds_the_message_inside_a_log_line():
    pattern = templates.search_regex("shape {got}, expected {want}.")
    m = pattern.search("[rank3]: ValueError: bad shape (1, 2, 3), expected (4, 5). Aborting")
    assert m.groupdict() == {"got": "(1, 2, 3)", "want": "(4, 5)"}


def test_search_pattern_leading_and_trailing_values():
    pattern = templates.search_regex("{name} must be on CUDA, got {device}")
    m = pattern.search("AssertionError: cu_seqlens_k must be on CUDA, got cpu")
    assert m.groupdict() == {"name": "cu_seqlens_k", "device": "cpu"}


def test_search_pattern_tolerates_rewrapped_whitespace():
    pattern = templates.search_regex("No available kernel. Aborting execution.")
    assert pattern.search("RuntimeError: No available kernel.  Aborting\n execution.")
