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


def test_a_quote_may_be_retyped_or_lost():
    # xFormers prints the hint in backticks; users retype it in single quotes, and an issue
    # tracker's Markdown renders it as code, without any
    template = "No such operator {op} - did you forget to build xformers with `python setup.py develop`?"
    for hint in ("`python setup.py develop`", "'python setup.py develop'", "python setup.py develop"):
        text = f"RuntimeError: No such operator xformers::efficient_attention_forward_cutlass - did you forget to build xformers with {hint}?"
        assert templates.Finder(template).search(text) is not None, hint
        assert templates.fullmatch(template, text.split(": ", 1)[1]) is not None, hint
    assert templates.fullmatch(template, "No such operator x - did you forget to build xformers with 'pip install'?") is None


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


# Finder must give exactly the plain pattern's first match, only faster.

FINDER_CASES = [
    ("{name} must be on CUDA, got {device}", "x\nAssertionError: cu_seqlens_k must be on CUDA, got cpu"),
    ("{name} must be on CUDA, got {device}", "must be on CUDA, got cpu"),  # no token before the lead
    ("{name} must be on CUDA, got {device}", "a:b  \t must be on CUDA, got cpu and q must be on CUDA, got x"),
    ("{name}: bad value", "x a:b: bad value"),  # the lead glued to the value
    ("{name}: bad value", "foo : bad value"),  # a blank the template does not allow
    (" leading blank {x}", "a\n\n   leading blank 7"),
    ("must be {x}", "mustard be 3; must be 4"),
    ("out tensor {x}", "dout tensor 1 out tensor 2"),
    ("{a}{b} glued", "xy glued"),  # no literal between the values: plain search
    ("{name} must be on CUDA", "t " + "must " * 50 + "t must be on CUDA"),  # many leads: plain search
    ("{name} must be on CUDA", "t" + " " * 100 + "must be on CUDA"),  # long blank run: plain search
    ("{name} must be on CUDA", "x" * 600 + " must be on CUDA y must be on CUDA"),  # token too long
]


@pytest.mark.parametrize("template,text", FINDER_CASES)
def test_finder_finds_what_the_plain_search_finds(template, text):
    plain = templates.search_regex(template).search(text)
    found = templates.Finder(template).search(text)
    assert (found and (found.span(), found.groupdict())) == (plain and (plain.span(), plain.groupdict()))


def test_finder_agrees_with_the_plain_search_on_every_shipped_template(dataset):
    from errkb.redos import near_misses

    noise = ["", " ", "\n", "x", ": ", "\t\t", "must "]
    by_template = {site.template for site in dataset.sites.values()}
    for n, template in enumerate(sorted(by_template)):
        finder = templates.Finder(template)
        values = {name: ["v", "a b", "", "(1, 2)"][(n + i) % 4] for i, name in enumerate(templates.placeholders(template))}
        message = templates.render(template, values)
        texts = [noise[n % 7] + message + noise[(n + 3) % 7], "Traceback\n" + noise[n % 7].join([message, finder.lead, message])]
        if n % 50 == 0:
            texts += [text[:4096] for text in near_misses(template)]
        for text in texts:
            plain, found = finder.pattern.search(text), finder.search(text)
            assert (found and (found.span(), found.groupdict())) == (plain and (plain.span(), plain.groupdict())), (template, text)


def test_a_value_glued_to_the_next_word_keeps_its_own_trailing_blank():
    # `{frontend_prefix}No valid ...`: the prefix cuDNN prints ends in a blank, and the template
    # glues the next word to the value, so the value must take that blank (it used to stop before
    # it and leave the literal nothing to match)
    pattern = templates.search_regex("cuDNN Frontend error: {frontend_prefix}No valid execution plans built.")
    m = pattern.search("RuntimeError: cuDNN Frontend error: [cudnn_frontend] Error: No valid execution plans built.")
    assert m is not None and m.group("frontend_prefix") == "[cudnn_frontend] Error: "
    assert pattern.search("cuDNN Frontend error: No valid execution plans built.").group("frontend_prefix") == ""
    wrapped = "cuDNN Frontend error: [cudnn_frontend] Error: No valid execution\n  plans built."
    assert pattern.search(wrapped) is not None
