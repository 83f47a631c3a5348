"""Autofixes (issue 18 item 3): each fixed rule's INVALID examples carry the code after the fix
(FIXED); applying the fixes gives exactly that, and it lints clean for the rule. A fix comes
only from a record fix that was itself confirmed on a GPU."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from errkb import layout, store
from errkb.lint.engine import lint_text
from errkb.lint.fixes import apply, decode_source, fix_source, line_starts
from errkb.lint.results import Finding, Fix
from errkb.lint.rule import Example, all_rules

RULES = all_rules()
FIXED_RULES = {code: cls for code, cls in RULES.items() if cls.FIXES}


def _invalid():
    for code, cls in FIXED_RULES.items():
        for i, ex in enumerate(cls.INVALID):
            yield pytest.param(code, ex, id=f"{code}-invalid-{i}")


def _lint(code: str, example: Example, source: str):
    return lint_text(source, archs=example.archs, select=[code], path=example.path, versions=dict(example.versions))


def _fix_all(code: str, example: Example) -> str:
    def lint(source: bytes):
        return _lint(code, example, source.decode()), None

    return fix_source(example.path, example.code.encode(), lint, unsafe=True).after.decode()


@pytest.mark.parametrize("code,example", list(_invalid()))
def test_fix_gives_the_fixed_form_which_lints_clean(code, example):
    fixes = [f.fix for f in _lint(code, example, example.code) if f.fix]
    if example.fixed is None:
        assert fixes == [], "an INVALID example whose findings have fixes must say what it becomes (fixed=)"
        return
    assert fixes, "fixed= is given but no finding has a fix"
    assert _fix_all(code, example) == example.fixed
    assert _lint(code, example, example.fixed) == []


def test_some_rules_have_fixes_and_safe_and_unsafe_both_occur():
    assert len(FIXED_RULES) >= 5
    kinds = {f.fix.safe for code, cls in FIXED_RULES.items() for ex in cls.INVALID
             for f in lint_text(ex.code, archs=ex.archs, select=[code]) if f.fix}
    assert kinds == {True, False}


@pytest.mark.parametrize("code", list(FIXED_RULES))
def test_each_fix_implements_a_record_fix_confirmed_on_a_gpu(code):
    """The record's status is `confirmed` and the case of that very fix (<record>:fix-N) ran
    and was confirmed in data/verification/results.json."""
    data = store.default_data_dir()
    results = json.loads(layout.results_path(data).read_text())["results"]
    statuses = {(r["case"]): r["status"] for r in results}
    for record_id, number in FIXED_RULES[code].FIXES.items():
        assert record_id in FIXED_RULES[code].RECORDS
        path = next(p for p in layout.record_paths(data) if p.stem == record_id)
        record = json.loads(path.read_text())
        assert record["verification"]["status"] == "confirmed"
        assert 1 <= number <= len(record["fixes"]) and record["fixes"][number - 1]["after"]
        assert statuses.get(f"{record_id}:fix-{number}") == "confirmed"


def test_no_fix_for_a_record_that_is_not_confirmed():
    # EKB201 on sm120 reports fa4-sm120-num-splits (verification: skipped): same edit, not offered
    src = ("from flash_attn.cute import flash_attn_varlen_func\n"
           "flash_attn_varlen_func(q, k, v, num_splits=4)\n")
    [sm120] = lint_text(src, archs=("sm120",), select=["EKB201"])
    [sm90] = lint_text(src, archs=("sm90",), select=["EKB201"])
    assert sm120.record_id == "fa4-sm120-num-splits" and sm120.fix is None
    assert sm90.record_id == "fa4-splitkv-sm90" and sm90.fix is not None and sm90.fix.safe


def test_offsets_count_characters_and_keep_crlf_and_non_ascii():
    src = ("# é ü 🚀\r\nfrom flash_attn.cute import flash_attn_varlen_func\r\n"
           "x = '🚀'; flash_attn_varlen_func(q, k, v, num_splits=4)\r\n")
    [f] = lint_text(src, archs=("sm90",), select=["EKB201"])
    assert apply(src, [f.fix]) == (src.replace("num_splits=4", "num_splits=1"), 1)


def test_apply_skips_clashing_edits_and_dedupes_shared_ones():
    text = "abcdef"
    a = Fix("a", True, 1, ((1, 3, "X"),))
    b = Fix("b", True, 1, ((2, 4, "Y"),))  # overlaps a: waits for the next pass
    c = Fix("c", True, 1, ((5, 5, "!"), (1, 3, "X")))  # shares a's edit
    assert apply(text, [a, b, c]) == ("aXde!f", 2)
    assert line_starts("a\nb\r\nc\rd") == [0, 2, 5, 7]
    assert decode_source("# -*- coding: latin-1 -*-\nx = 'é'\n".encode("latin-1")) == (
        "# -*- coding: latin-1 -*-\nx = 'é'\n", "iso-8859-1")


def test_a_fix_that_breaks_the_file_is_not_applied():
    broken = Fix("oops", True, 1, ((0, 0, "(("),))
    finding = Finding("x.py", 1, 1, "EKB999", "n", "r", "m", fix=broken)

    def lint(source: bytes):
        return ([finding], None) if source == b"x = 1\n" else ([], "syntax error at line 1, column 3")

    out = fix_source("x.py", b"x = 1\n", lint, unsafe=False)
    assert out.after == b"x = 1\n" and out.fixed == 0 and "not applied" in out.problem


def test_findings_with_fixes_round_trip_through_json():
    [f] = lint_text("from flash_attn import flash_attn_func\nflash_attn_func(q, k, v, 0.1, softcap=50.0)\n",
                    select=["EKB504"])
    assert f.fix is not None and not f.fix.safe
    assert Finding(**json.loads(json.dumps(f.to_json()))) == f
    assert Finding(**json.loads(json.dumps(f.to_json()))).fix == f.fix


SPLITS = ("from flash_attn.cute import flash_attn_varlen_func\n"
          "flash_attn_varlen_func(q, k, v, num_splits=4)\n"
          "from flash_attn import flash_attn_func\n"
          "flash_attn_func(q, k, v, 0.1, softcap=50.0)\n")


def _errkb(*args, cwd, stdin=None):
    return subprocess.run([sys.executable, "-m", "errkb.cli", "lint", "--no-cache", "--gpu-arch", "sm90", *args],
                          cwd=cwd, input=stdin, capture_output=True, text=True, timeout=300)


def test_cli_diff_fix_and_unsafe_fixes(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(SPLITS)
    diff = _errkb("--diff", "k.py", cwd=tmp_path)
    assert diff.returncode == 1, diff.stderr
    assert "-flash_attn_varlen_func(q, k, v, num_splits=4)\n+flash_attn_varlen_func(q, k, v, num_splits=1)" in diff.stdout
    assert "+flash_attn_func" not in diff.stdout  # the dropout fix is unsafe
    assert f.read_text() == SPLITS  # --diff changes nothing

    fixed = _errkb("--fix", "k.py", cwd=tmp_path)
    assert fixed.returncode == 1  # the unsafe one is left
    assert "fixed 1 finding(s) in 1 file(s), 1 left (1 fixable with --unsafe-fixes)" in fixed.stderr
    assert "EKB504" in fixed.stdout and "EKB201" not in fixed.stdout
    assert f.read_text() == SPLITS.replace("num_splits=4", "num_splits=1")

    both = _errkb("--fix", "--unsafe-fixes", "k.py", cwd=tmp_path)
    assert both.returncode == 0, both.stdout + both.stderr
    assert f.read_text() == SPLITS.replace("num_splits=4", "num_splits=1").replace("0.1,", "0.0,")


def test_cli_fix_on_standard_input_writes_the_source_to_stdout(tmp_path):
    out = _errkb("--fix", "-", "--stdin-filename", "k.py", cwd=tmp_path, stdin=SPLITS)
    assert out.stdout == SPLITS.replace("num_splits=4", "num_splits=1")
    assert "k.py:4:" in out.stderr and out.returncode == 1


def test_a_file_that_changed_since_it_was_read_is_not_written(tmp_path):
    from errkb.lint.fixes import write_if_unchanged

    f = tmp_path / "k.py"
    f.write_text("new content\n")
    assert "changed since it was read" in write_if_unchanged(str(f), b"old content\n", b"fixed\n")
    assert f.read_text() == "new content\n"
    assert write_if_unchanged(str(f), b"new content\n", b"fixed\n") is None and f.read_text() == "fixed\n"


def test_a_finding_quotes_the_message_of_the_target_release():
    # flash-attn-4 4.0.0b39 moved the split-KV refusal into config.py with new wording (b40 read)
    code = "from flash_attn.cute import flash_attn_varlen_func\nflash_attn_varlen_func(q, k, v, num_splits=4)\n"
    old = lint_text(code, archs=("sm90",), select=["EKB201"])
    new = lint_text(code, archs=("sm90",), select=["EKB201"], versions={"flash-attn-4": "4.0.0b40"})
    assert "SplitKV not supported on SM 9.0" in old[0].message
    assert "SM9 forward does not support SM100-only options: num_splits=4 (needs 1)" in new[0].message
