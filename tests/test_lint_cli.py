"""`errkb lint`, `errkb rules`, `errkb rule`: exit codes, config, suppressions, formats, robustness,
cache and processes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from errkb.cli import main

BAD = ("from sglang.kernels.ops.attention.flash_attention_v4 import flash_attn_with_kvcache\n"
       "import torch.nn.functional as F\n"
       "out = flash_attn_with_kvcache(q, kc, vc, k=k_new)\n"
       "from torch.nn.attention import sdpa_kernel, SDPBackend\n"
       "with sdpa_kernel(SDPBackend.MATH):\n"  # EKB302 needs a math-only context
       "    F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)\n")
SCHEMA = Path(__file__).parent / "data" / "sarif" / "sarif-2.1.0-rtm.5.json"


def lint(tmp_path, *args, capsys):
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        rc = main(["lint", *args])
    finally:
        os.chdir(cwd)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "ok.py").write_text("print('hello')\n")
    return tmp_path


def test_exit_codes(tree, capsys):
    rc, out, _ = lint(tree, "--no-cache", capsys=capsys)
    assert rc == 1 and "bad.py:3:" in out and "EKB101" in out and "EKB302" in out
    rc, out, _ = lint(tree, "ok.py", "--no-cache", capsys=capsys)
    assert rc == 0 and out == ""
    rc, _, err = lint(tree, "--select", "NOPE", capsys=capsys)
    assert rc == 2 and "unknown rule" in err
    rc, _, err = lint(tree, "--gpu-arch", "sm99", capsys=capsys)
    assert rc == 2
    rc, _, err = lint(tree, "nowhere.py", capsys=capsys)
    assert rc == 2 and "no such file" in err


def test_json_findings_name_the_upstream_error_and_the_record(tree, capsys):
    rc, out, _ = lint(tree, "--format", "json", "--no-cache", capsys=capsys)
    found = json.loads(out)
    assert {f["rule"] for f in found} == {"EKB101", "EKB302"}
    first = found[0]
    assert set(first) >= {"path", "line", "col", "rule", "record_id", "message"}
    assert first["record_id"] == "sglang-fa4-kvcache-no-inplace-kv-update"
    assert "FA4 does not support updating KV cache in-place." in first["message"]


def test_select_ignore_and_config_with_cli_override(tree, capsys):
    rc, out, _ = lint(tree, "--format", "json", "--select", "EKB3", "--no-cache", capsys=capsys)
    assert {f["rule"] for f in json.loads(out)} == {"EKB302"}
    (tree / "pyproject.toml").write_text('[tool.errkb]\nignore = ["EKB302"]\ngpu-archs = ["sm90"]\n'
                                         '[tool.errkb.per-file-ignores]\n"skip_*.py" = ["EKB101"]\n')
    (tree / "skip_me.py").write_text(BAD)
    rc, out, _ = lint(tree, "--format", "json", "--no-cache", capsys=capsys)
    assert [(f["path"], f["rule"]) for f in json.loads(out)] == [("bad.py", "EKB101")]
    (tree / "pyproject.toml").write_text('[tool.errkb]\nexclude = ["bad.py", "skip_*.py"]\n')
    rc, out, _ = lint(tree, "--no-cache", capsys=capsys)
    assert rc == 0


def test_arch_config_narrows_arch_dependent_rules(tmp_path, capsys):
    (tmp_path / "a.py").write_text("from flash_attn.cute import flash_attn_func\nflash_attn_func(q, k, v, qv=qv)\n")
    assert lint(tmp_path, "--gpu-arch", "sm100", "--no-cache", capsys=capsys)[0] == 0
    (tmp_path / "pyproject.toml").write_text('[tool.errkb]\ngpu-archs = ["sm100"]\n')
    assert lint(tmp_path, "--no-cache", capsys=capsys)[0] == 0
    assert lint(tmp_path, "--gpu-arch", "sm90,sm100", "--no-cache", capsys=capsys)[0] == 1


def test_an_arch_dependent_finding_says_when_no_gpu_was_named(tmp_path, capsys):
    """Where neither the file nor the configuration names a GPU, the default archs stand in and the
    finding says so; a file or a project that names its GPUs gets no such note."""
    from errkb.lint.archs import ASSUMED_NOTE

    launch = "python -m sglang.launch_server --model-path m --attention-backend fa3\n"
    (tmp_path / "serve.sh").write_text(launch)
    rc, out, _ = lint(tmp_path, "--no-cache", capsys=capsys)
    assert rc == 1 and "EKB703" in out and ASSUMED_NOTE in out
    rc, out, _ = lint(tmp_path, "--no-cache", "--gpu-arch", "sm100", capsys=capsys)
    assert rc == 1 and "EKB703" in out and ASSUMED_NOTE not in out
    (tmp_path / "serve.sh").write_text("# on a B200\n" + launch)
    rc, out, _ = lint(tmp_path, "--no-cache", capsys=capsys)
    assert rc == 1 and "EKB703" in out and ASSUMED_NOTE not in out
    (tmp_path / "serve.sh").write_text("# on an H100\n" + launch)
    assert lint(tmp_path, "--no-cache", capsys=capsys)[0] == 0


def test_inline_suppression_and_unused_suppressions(tmp_path, capsys):
    code = BAD.replace("k=k_new)\n", "k=k_new)  # errkb: ignore[EKB101]\n")
    code = code.replace("is_causal=True)\n", "is_causal=True)  # errkb: ignore\n") + "x = 1  # errkb: ignore[EKB201]\n"
    (tmp_path / "a.py").write_text(code)
    rc, out, _ = lint(tmp_path, "--no-cache", capsys=capsys)
    assert rc == 0 and out == ""
    rc, out, _ = lint(tmp_path, "--no-cache", "--report-unused-suppressions", "--format", "json", capsys=capsys)
    found = json.loads(out)
    assert rc == 1 and [(f["line"], f["rule"]) for f in found] == [(7, "EKB000")]


def test_sarif_validates_against_the_official_schema(tree, capsys):
    rc, out, _ = lint(tree, "--format", "sarif", "--no-cache", capsys=capsys)
    doc = json.loads(out)
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())).validate(doc)
    results = doc["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["EKB101", "EKB302"]
    assert results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 3


def test_sarif_with_no_findings_is_valid_too(tmp_path, capsys):
    (tmp_path / "ok.py").write_text("x = 1\n")
    rc, out, _ = lint(tmp_path, "--format", "sarif", "--no-cache", capsys=capsys)
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())).validate(json.loads(out))


def test_github_annotations(tree, capsys):
    rc, out, _ = lint(tree, "--format", "github", "--no-cache", capsys=capsys)
    lines = out.splitlines()
    assert lines[0].startswith("::error file=bad.py,line=3,col=")
    assert "title=errkb EKB101 (fa4-kvcache-inplace-update)::NotImplementedError: FA4 does not" in lines[0]


def test_bad_inputs_are_reported_and_skipped(tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "syntax.py").write_text("def f(:\n    flash_attn_with_kvcache\n")
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: utf-8 -*-\nflash_attn_with_kvcache = '\xff\xfe'\n")
    (tmp_path / "binary.py").write_bytes(b"\x00\x01flash_attn_with_kvcache\x00")
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "huge.py").write_bytes(b"flash_attn_with_kvcache = 1\n" + b"x = 1\n" * 1_000_000)
    (tmp_path / "deep.py").write_text(BAD + "y = 1 + " + " + ".join(["x"] * 3000) + "\n")
    # libcst's native parser dies (SIGSEGV) on the first two and crawls on the third
    (tmp_path / "parens.py").write_text(BAD + "z = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    (tmp_path / "unary.py").write_text(BAD + "z = " + "-" * 100_000 + "1\n")
    (tmp_path / "chain.py").write_text(BAD + "z = " + "1 + " * 100_000 + "1\n")
    (tmp_path / "loop").mkdir()
    (tmp_path / "loop" / "up").symlink_to(tmp_path)
    (tmp_path / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    rc, out, err = lint(tmp_path, "--no-cache", capsys=capsys)
    assert rc == 1 and out.count("EKB") == 4 and "internal error" not in err, err
    for what in ("parens.py: too deeply nested", "unary.py: too deeply nested", "chain.py: too deeply nested",
                 "syntax.py: syntax error", "latin.py: cannot decode", "binary.py: binary file",
                 "huge.py: larger than", "symlink loop", "dangling.py: broken symlink"):
        assert what in err, what


def test_output_is_deterministic_across_processes_and_cache(tmp_path, capsys):
    for i in range(80):
        (tmp_path / f"m{i:02}.py").write_text(BAD if i % 3 == 0 else "x = 1\n")
    runs = [lint(tmp_path, "--format", "json", *args, capsys=capsys)[1]
            for args in (["--no-cache", "-j", "1"], ["--no-cache", "-j", "2"], ["-j", "1"], ["-j", "2"])]
    assert len(set(runs)) == 1 and len(json.loads(runs[0])) == 2 * 27
    assert any((tmp_path / ".errkb-cache").rglob("*.json"))
    rc, _, err = lint(tmp_path, capsys=capsys)
    assert "54 finding(s) in 80 file(s) (80 cached" in err  # unchanged files are not even read
    (tmp_path / "m00.py").write_text("x = 2\n")  # an edit is seen at once
    rc, _, err = lint(tmp_path, capsys=capsys)
    assert "52 finding(s) in 80 file(s) (79 cached" in err


def test_rule_docs(capsys):
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert "EKB101" in out and "flashinfer-run-before-plan" in out
    assert main(["rule", "EKB201"]) == 0
    page = capsys.readouterr().out
    assert "SplitKV not supported on SM 9.0" in page and "Example that is reported" in page
    assert "Fix" in page and "errkb: ignore[EKB201]" in page
    assert main(["rule", "fa4-head-dim"]) == 0
    assert main(["rule", "nope"]) == 2


def test_every_linked_record_lists_its_rules(dataset):
    from errkb.lint.rule import all_rules

    for code, cls in all_rules().items():
        for rid in cls.RECORDS:
            assert code in dataset.records_by_id[rid].lint_rules, (code, rid)


@pytest.mark.parametrize("code", sorted(__import__("errkb.lint.rule", fromlist=["all_rules"]).all_rules()))
def test_every_rule_has_a_page(code, capsys):
    assert main(["rule", code]) == 0
    page = capsys.readouterr().out
    assert page.startswith(code) and "Prevents:" in page and "(record missing)" not in page
