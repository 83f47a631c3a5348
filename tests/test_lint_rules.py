"""Every rule's VALID and INVALID examples are its tests (Fixit style)."""

from __future__ import annotations

import pytest

from errkb.lint.engine import lint_text
from errkb.lint.rule import Example, all_rules

RULES = all_rules()


def _cases(kind):
    for code, cls in RULES.items():
        for i, ex in enumerate(getattr(cls, kind)):
            ex = ex if isinstance(ex, Example) else Example(ex, findings=0)
            yield pytest.param(code, ex, id=f"{code}-{kind.lower()}-{i}")


def _lint(example, code):
    return lint_text(example.code, archs=example.archs, select=[code], path=example.path,
                     versions=dict(example.versions))


@pytest.mark.parametrize("code,example", list(_cases("VALID")))
def test_valid(code, example):
    found = _lint(example, code)
    assert found == [], found


@pytest.mark.parametrize("code,example", list(_cases("INVALID")))
def test_invalid(code, example):
    found = _lint(example, code)
    assert len(found) == example.findings, (example.code, found)
    assert all(f.rule == code for f in found)


# a line that puts the file on a ROCm GPU, as a comment or prose of every file kind (not notebooks'
# JSON): the arch-dependent rules judge NVIDIA compute capabilities, so they fall silent; the others
# do not depend on the GPU and keep every finding
_ROCM = "\n# on an MI300X (gfx942): export HIP_VISIBLE_DEVICES=0\n"


@pytest.mark.parametrize("code,example", [p for p in _cases("INVALID") if not p.values[1].path.endswith(".ipynb")])
def test_a_rocm_file_is_judged_only_by_the_arch_free_rules(code, example):
    from dataclasses import replace

    found = _lint(replace(example, code=example.code + _ROCM), code)
    assert len(found) == (0 if RULES[code].ARCH_DEPENDENT else example.findings), (example.code, found)


@pytest.mark.parametrize("code", list(RULES))
def test_rule_is_documented(code):
    cls = RULES[code]
    assert cls.__doc__ and cls.NAME and cls.RECORDS and cls.INVALID and cls.VALID


@pytest.mark.parametrize("code,example", list(_cases("INVALID")))
def test_findings_quote_a_linked_site_of_their_record(code, example, dataset):
    """A finding names the error in upstream's words: the text before the record link matches
    a harvested message template of a site linked to the finding's record."""
    from errkb import templates

    for f in _lint(example, code):
        record = dataset.records_by_id[f.record_id]
        words = f.message.split(" (errkb record ")[0]
        assert words.startswith(record.error_class + ": ")
        words = words[len(record.error_class) + 2:]
        # a record without harvested sites (argparse's own messages) is quoted by its own template
        wanted = [dataset.sites[s].template for s in record.sites] or [record.template]
        assert any(templates.fullmatch(t, words) is not None for t in wanted), (words, record.id)
