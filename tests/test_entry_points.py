"""Entry-point steps (`entry_<kind>`): their naming, what `expect_first` decides, how their results
are kept out of the record's verdict and counted in the stats, and how the record page shows them.
Everything here runs without torch or a GPU."""

from __future__ import annotations

import argparse
import json
import logging
import logging.config
import warnings
from pathlib import Path

import pytest

from errkb.dataset import Dataset
from errkb.model import EntryKind, Record
from errkb.verify import results as res
from errkb.verify import runner, spec
from errkb.verify.case import Context, Refuted, Skip

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
CASES = REPO / "verification" / "cases"

ERROR = {"error_class": "ValueError", "template": "backend {name} needs an MLA model", "kind": "error"}
WARNING = {"error_class": "logging.WARNING", "template": "{name} is deprecated", "kind": "warning"}


def _raise(exc):
    raise exc


# ------------------------------------------------------------------ step naming


def test_entry_steps_are_named_by_kind_and_ordered_last(tmp_path):
    area = tmp_path / "x"
    area.mkdir()
    (area / "rec-a.py").write_text("REQUIRES = {}\ndef entry_vllm_engine(ctx): pass\ndef control(ctx): pass\n"
                                   "def reproduce(ctx): pass\ndef fix_1(ctx): pass\n")
    cases = spec.discover(tmp_path, {"rec-a": {"backends": ["vllm"]}})
    assert [c.id for c in cases] == ["rec-a:reproduce", "rec-a:fix-1", "rec-a:control", "rec-a:entry-vllm-engine"]
    assert spec.entry_kind("rec-a:entry-vllm-engine") == "vllm-engine"
    assert spec.entry_kind("entry_sglang_server") == "sglang-server"
    assert spec.entry_kind("rec-a:reproduce") is None
    # an entry step gets a worker of its own, next to its backend's (tests/test_entry_isolation.py)
    assert [runner.worker_group(c) for c in cases] == ["vllm", "vllm", "vllm", "vllm:entry:rec-a:entry-vllm-engine"]
    assert [c.id for c in runner.select(cases, {}, steps=["entry-*"])] == ["rec-a:entry-vllm-engine"]


def test_an_unknown_entry_kind_is_refused(tmp_path):
    area = tmp_path / "x"
    area.mkdir()
    (area / "rec-a.py").write_text("def reproduce(ctx): pass\ndef entry_my_server(ctx): pass\n")
    with pytest.raises(spec.CaseError, match="no known entry point"):
        spec.discover(tmp_path, {"rec-a": {"backends": ["vllm"]}})


def test_the_models_entry_kinds_are_the_harness_kinds():
    assert set(EntryKind.__args__) == set(spec.ENTRY_KINDS)


# ------------------------------------------------------------------ what expect_first decides


def test_reached_when_the_records_error_comes_first():
    ctx = Context(ERROR, "entry_sglang_server")
    exc, _ = ctx.expect_first(_raise, ValueError("backend trtllm_mla needs an MLA model"))
    assert ctx.observed["entry"] == "reached" and ctx.observed["match"] == "full"
    assert isinstance(exc, ValueError)


def test_reached_through_a_wrapping_exception():
    def wrapped():
        try:
            raise ValueError("backend x needs an MLA model")
        except ValueError as inner:
            raise RuntimeError("launch failed") from inner

    ctx = Context(ERROR, "entry_sglang_server")
    ctx.expect_first(wrapped)
    assert ctx.observed["entry"] == "reached" and ctx.observed["wrapped_in"] == "RuntimeError"


def test_preempted_keeps_what_the_user_sees_instead():
    ctx = Context(ERROR, "entry_sglang_server")
    with pytest.raises(Refuted, match="preempted"):
        ctx.expect_first(_raise, ValueError("TRTLLM MLA backend is only supported on Blackwell GPUs"))
    assert ctx.observed["entry"] == "preempted"
    assert ctx.observed["message"].startswith("TRTLLM MLA backend is only supported")


def test_not_raised_when_the_entry_point_goes_through():
    ctx = Context(ERROR, "entry_vllm_engine")
    with pytest.raises(Refuted, match="without the record's message"):
        ctx.expect_first(lambda: "ok")
    assert ctx.observed["entry"] == "not-raised"


def test_a_missing_module_is_a_skip_not_a_verdict():
    ctx = Context(ERROR, "entry_vllm_engine")
    with pytest.raises(Skip, match="errkb_no_such_module"):
        ctx.expect_first(lambda: __import__("errkb_no_such_module"))


def test_a_deliberate_import_error_is_a_verdict():
    ctx = Context(ERROR, "entry_transformers_model")
    with pytest.raises(Refuted, match="preempted"):
        ctx.expect_first(_raise, ImportError("the package for FlashAttention2 doesn't seem to be installed."))
    assert ctx.observed["class"] == "ImportError"


def test_a_warning_record_is_reached_by_a_log_line_even_if_the_launch_stops_later():
    def launch():
        logging.getLogger("errkb_test_server.args").warning("nsa is deprecated")
        raise RuntimeError("no GPU")

    ctx = Context(WARNING, "entry_sglang_server")
    ctx.expect_first(launch, loggers=("errkb_test_server",))
    assert ctx.observed["entry"] == "reached" and ctx.observed["class"] == "logging.WARNING"
    assert ctx.observed["then_raised"]["class"] == "RuntimeError"


def test_a_warning_record_is_reached_by_a_python_warning():
    ctx = Context({**WARNING, "error_class": "DeprecationWarning"}, "entry_sglang_server")
    ctx.expect_first(lambda: warnings.warn("nsa is deprecated", DeprecationWarning))
    assert ctx.observed["entry"] == "reached"


def test_an_argparse_refusal_is_read_from_what_argparse_printed():
    record = {"error_class": "SystemExit (argparse usage error, exit status 2)", "kind": "error",
              "template": "argument --attention-backend: invalid choice: {choice} (choose from {choices})"}

    def parse():
        p = argparse.ArgumentParser(prog="sglang serve")
        p.add_argument("--attention-backend", choices=["triton", "fa3"])
        p.parse_args(["--attention-backend", "torch_sdpa"])

    ctx = Context(record, "entry_sglang_server")
    ctx.expect_first(parse)
    assert ctx.observed["entry"] == "reached" and ctx.observed["class"] == "SystemExit"
    assert "invalid choice: 'torch_sdpa'" in ctx.observed["message"]


def test_a_claim_step_judges_an_argparse_refusal_through_argparse_call():
    from errkb.verify.case import argparse_call

    record = {"error_class": "SystemExit (argparse usage error, exit status 2)", "kind": "error",
              "template": "argument --attention-backend: invalid choice: {choice} (choose from {choices})"}
    p = argparse.ArgumentParser(prog="sglang serve")
    p.add_argument("--attention-backend", choices=["triton", "fa3"])
    ctx = Context(record, "reproduce")
    exc = ctx.expect_error(argparse_call, p.parse_args, ["--attention-backend", "torch_sdpa"])
    assert ctx.observed["class"] == "SystemExit" and ctx.observed["match"] == "full"
    assert exc.code == 2 and exc.prog == "sglang serve"
    assert "--attention-backend {triton,fa3}" in argparse_call(p.parse_args, ["--help"])
    assert argparse_call(p.parse_args, ["--attention-backend", "fa3"]).attention_backend == "fa3"
    with pytest.raises(Refuted):  # another usage error is not the record's
        ctx.expect_error(argparse_call, p.parse_args, ["--unknown"])
    assert ctx.observed["class"] == "errkb.verify.case.UsageExit"


# ------------------------------------------------------------------ verdicts, stats and the page


def _result(case, status, env="e1", entry=None):
    observed = {"entry": entry, "class": "ValueError", "message": "something else"} if entry else None
    record, step = case.split(":")
    return {"case": case, "record": record, "step": step, "backend": "b", "status": status, "env_id": env,
            "observed": observed, "duration_s": 1.0}


BODY = {"environments": {"e1": {"gpu": "NVIDIA H200", "compute_capability": "9.0"}, "e2": {"gpu": "NVIDIA B200"}},
        "results": [
            _result("rec-a:reproduce", "confirmed"),
            _result("rec-a:entry-sglang-server", "refuted", entry="preempted"),
            _result("rec-a:entry-sglang-server", "confirmed", env="e2"),
            _result("rec-b:reproduce", "confirmed"),
            _result("rec-b:entry-vllm-engine", "refuted", entry="not-raised"),
            _result("rec-c:reproduce", "confirmed"),
            _result("rec-c:entry-vllm-engine", "refuted", entry="preempted"),
            _result("rec-d:entry-vllm-engine", "skipped"),
        ]}


def test_entry_steps_stay_out_of_the_records_verdict():
    verdicts = res.record_verdicts(BODY)
    assert verdicts["rec-a"]["status"] == "confirmed"  # preempted on one GPU does not refute the message
    assert verdicts["rec-a"]["cases"] == ["rec-a:reproduce"]
    assert "rec-d" not in verdicts  # only an entry step: nothing about the claim ran


def test_entry_verdicts_take_the_best_over_environments():
    assert res.entry_verdicts(BODY) == {"rec-a": {"sglang-server": "reached"}, "rec-b": {"vllm-engine": "not-raised"},
                                        "rec-c": {"vllm-engine": "preempted"}, "rec-d": {"vllm-engine": "skipped"}}
    summary = res.entry_summary(BODY)
    assert summary["records"] == 4
    assert summary["records_by_verdict"] == {"reached": 1, "preempted": 1, "not-raised": 1, "error": 0, "skipped": 1}
    assert summary["cases"]["preempted"] == 2
    # the summary's device-time field is for reports only and is left unchecked here; what it
    # adds up is the set of entry steps that `cases` counts, checked instead
    assert sum(summary["cases"].values()) == sum(r["step"].startswith("entry-") for r in BODY["results"])


def test_stats_count_records_reached_from_their_entry_point(tmp_path):
    data = tmp_path / "data"
    (data / "verification").mkdir(parents=True)
    (data / "records").mkdir()
    (data / "verification" / "results.json").write_text(json.dumps(BODY))
    block = res.summary(data)
    assert block["reached_from_entry_point"] == 1
    assert block["cases"]["refuted"] == 0  # preempted entry steps are not refuted claims
    assert block["cases"]["confirmed"] == 3


def test_the_shipped_stats_have_the_count(capsys):
    from cli import main

    assert main(["stats", "--format", "json"]) == 0
    v = json.loads(capsys.readouterr().out)["verification"]
    assert isinstance(v["reached_from_entry_point"], int) and v["reached_from_entry_point"] >= 1
    assert main(["stats"]) == 0
    assert "reached from entry point:" in capsys.readouterr().out


def test_the_record_page_shows_each_entry_point_and_what_came_first():
    from api.web import render_record

    ds = Dataset.load(DATA)
    record = next(r for r in ds.records if r.id == "transformers-fa2-not-available")
    detail = ds.detail(record)
    assert [p.kind for p in detail.entry_points] == ["transformers-model"]
    (seen,) = [r for r in detail.entry_point_results if r.environment]
    assert seen.verdict == "preempted" and "doesn't seem to be installed" in seen.first_seen
    html = render_record(detail)
    assert "Reached from" in html and "entry-preempted" in html and "doesn&#x27;t seem to be installed" in html
    # an entry point whose step has not run says so
    unrun = ds.detail(next(r for r in ds.records if r.id == "sglang-trtllm-mla-requires-mla-model"))
    if not any(r.environment for r in unrun.entry_point_results):
        assert "not-run" in render_record(unrun)


# ------------------------------------------------------------------ the shipped records and cases agree


def test_every_listed_entry_point_has_its_step_and_every_step_is_listed():
    records = runner.load_records(DATA)
    steps = {(c.record, spec.entry_kind(c.step)) for c in spec.discover(CASES, records) if spec.entry_kind(c.step)}
    listed = set()
    for path in DATA.glob("records/*/*.json"):
        record = Record.model_validate_json(path.read_text())
        listed |= {(record.id, p.kind) for p in record.entry_points}
    assert steps == listed
    assert len(listed) >= 15


def test_log_lines_are_kept_when_the_launch_reconfigures_logging():
    def launch():
        logging.config.dictConfig({"version": 1, "disable_existing_loggers": False,
                                   "loggers": {"errkb_test_engine": {"handlers": [], "propagate": False}}})
        logging.getLogger("errkb_test_engine.platform").warning("VLLM_X is deprecated")

    ctx = Context(WARNING, "entry_vllm_engine")
    ctx.expect_first(launch, loggers=("errkb_test_engine",))
    assert ctx.observed["entry"] == "reached"
