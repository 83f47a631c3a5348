"""The verification harness for real, on the CPU: worker isolation (abort, segfault, hang,
a broken case), verdicts, skips, resume, shards, merge, record updates and the result schema.

The cases run a tiny pure-Python library shipped in tests/verify_fake/ that raises real
exceptions and warnings and computes real numbers; nothing about the results is mocked.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from errkb.verify import results as res
from errkb.verify import runner, spec, summary

REPO = Path(__file__).resolve().parent.parent
FAKE = REPO / "tests" / "verify_fake"
CASES = FAKE / "cases"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    dest = tmp_path / "data"
    shutil.copytree(FAKE / "records", dest / "records")
    return dest


def verify(data: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "errkb.verify", "--data-dir", str(data), "--cases", str(CASES), *args]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr + proc.stdout
    return proc


def by_case(path: Path) -> dict[str, dict]:
    return {r["case"]: r for r in runner.read_results(path)}


@pytest.fixture(scope="module")
def full_run(tmp_path_factory) -> tuple[Path, Path, dict[str, dict]]:
    base = tmp_path_factory.mktemp("run")
    data = base / "data"
    shutil.copytree(FAKE / "records", data / "records")
    out = base / "r.jsonl"
    verify(data, "run", "--out", str(out))
    return data, out, by_case(out)


def test_isolation_each_crash_is_recorded_and_the_run_goes_on(full_run):
    _, _, r = full_run
    assert r["fake-crash:reproduce"]["status"] == "error"
    assert "SIGABRT" in r["fake-crash:reproduce"]["reason"]
    assert r["fake-crash:fix-1"]["status"] == "error"
    assert "SIGSEGV" in r["fake-crash:fix-1"]["reason"]
    assert r["fake-crash:control"]["status"] == "confirmed"  # a fresh worker took over
    assert r["fake-hang:reproduce"]["status"] == "error" and "timeout" in r["fake-hang:reproduce"]["reason"]
    assert r["fake-hang:control"]["status"] == "confirmed"
    broken = r["fake-broken-case:reproduce"]
    assert broken["status"] == "error" and "KeyError" in broken["reason"] and "Traceback" in broken["traceback"]


def test_verdicts_match_what_the_library_did(full_run):
    _, _, r = full_run
    repro = r["fake-mask-causal:reproduce"]
    assert repro["status"] == "confirmed"
    assert repro["observed"] == {"class": "RuntimeError", "match": "full",
                                 "message": "fake_sdpa: Explicit attn_mask should not be set when is_causal=True"}
    assert r["fake-mask-causal:fix-1"]["status"] == "confirmed"
    assert r["fake-mask-causal:fix-1"]["max_error"] < 1e-9
    assert r["fake-mask-causal:fix-1"]["tolerance"] == {"atol": 1e-9, "rtol": 0.0}
    assert r["fake-wrong-claim:reproduce"]["status"] == "refuted"
    assert r["fake-wrong-claim:fix-1"]["status"] == "refuted" and r["fake-wrong-claim:fix-1"]["max_error"] == 1.0
    warn = r["fake-kernel-not-used:reproduce"]
    assert warn["status"] == "confirmed" and warn["observed"]["class"] == "UserWarning"
    assert r["fake-kernel-not-used:fix-1"]["status"] == "confirmed"


def test_unmet_needs_are_skipped_with_the_reason(full_run):
    _, _, r = full_run
    assert r["fake-needs-gpu:reproduce"]["status"] == "skipped"
    assert "no_such_module_errkb_test" in r["fake-needs-gpu:reproduce"]["reason"]
    ctrl = r["fake-needs-gpu:control"]
    assert ctrl["status"] == "skipped" and "sm100+" in ctrl["reason"]


def test_result_schema(full_run):
    _, out, r = full_run
    keys = {"schema", "case", "record", "step", "backend", "status", "reason", "observed", "max_error",
            "tolerance", "duration_s", "env_id", "env", "case_sha", "case_file", "finished_at"}
    for result in r.values():
        assert keys <= set(result), result["case"]
        assert result["status"] in res.STATUSES
        env = result["env"]
        for k in ("gpu", "compute_capability", "driver", "cuda", "torch", "libraries", "errkb_commit", "python"):
            assert k in env
    assert {c.id for c in spec.discover(CASES, runner.load_records(FAKE))} == set(r)


def test_resume_skips_done_cases_and_finishes_the_rest(data, tmp_path):
    out = tmp_path / "r.jsonl"
    verify(data, "run", "--out", str(out), "--record", "fake-mask-causal")
    lines = out.read_text().splitlines()
    assert len(lines) == 3
    # an interrupted run: one result lost, and a torn half line at the end
    out.write_text("\n".join(lines[:2]) + "\n" + lines[2][: len(lines[2]) // 2])
    proc = verify(data, "run", "--out", str(out), "--record", "fake-mask-causal", "--record", "fake-crash")
    assert "resumed 2" in proc.stdout
    r = by_case(out)
    assert set(r) == {"fake-mask-causal:reproduce", "fake-mask-causal:fix-1", "fake-mask-causal:control",
                      "fake-crash:reproduce", "fake-crash:fix-1", "fake-crash:control"}
    # done errors stay done, unless asked
    again = verify(data, "run", "--out", str(out), "--record", "fake-crash")
    assert "resumed 3" in again.stdout
    retry = verify(data, "run", "--out", str(out), "--record", "fake-crash", "--retry-errors")
    assert "resumed 1" in retry.stdout


def test_shards_partition_by_record_and_merge_updates_records(data, tmp_path):
    outs = []
    for i in range(3):
        out = tmp_path / f"shard{i}.jsonl"
        verify(data, "run", "--shard", f"{i}/3", "--out", str(out), "--backend", "fakeattn",
               "--record", "fake-mask-causal", "--record", "fake-wrong-claim", "--record", "fake-needs-gpu",
               "--record", "fake-broken-case")
        outs.append(out)
    per_shard = [{r["record"] for r in runner.read_results(o)} for o in outs]
    assert sum(len(s) for s in per_shard) == 4 and set().union(*per_shard) == {
        "fake-mask-causal", "fake-wrong-claim", "fake-needs-gpu", "fake-broken-case"}
    verify(data, "merge", *map(str, outs))
    merged = json.loads((data / "verification" / "results.json").read_text())
    assert len(merged["results"]) == 8 and len(merged["environments"]) == 1
    assert all("env" not in r for r in merged["results"])
    rec = lambda rid: json.loads((data / "records" / "fake" / f"{rid}.json").read_text())["verification"]  # noqa: E731
    assert rec("fake-mask-causal")["status"] == "confirmed"
    assert rec("fake-mask-causal")["cases"] == ["fake-mask-causal:reproduce", "fake-mask-causal:fix-1",
                                                "fake-mask-causal:control"]
    assert rec("fake-wrong-claim")["status"] == "refuted" and "returned without raising" in rec("fake-wrong-claim")["note"]
    assert rec("fake-needs-gpu")["status"] == "skipped"
    assert rec("fake-broken-case")["status"] == "error"
    assert rec("fake-hang")["status"] == "unverified"  # not run: left alone
    # a person disputes the refuted record; merging the same results again keeps that
    path = data / "records" / "fake" / "fake-wrong-claim.json"
    body = json.loads(path.read_text())
    body["verification"] = {"status": "disputed", "cases": [], "note": "library only warns"}
    path.write_text(json.dumps(body, indent=2) + "\n")
    verify(data, "merge", str(outs[0]))
    assert rec("fake-wrong-claim")["status"] == "disputed"
    assert rec("fake-wrong-claim")["note"] == "library only warns"
    s = summary(data)
    assert (s["confirmed"], s["refuted"], s["error"], s["skipped"], s["disputed"]) == (1, 1, 1, 1, 1)
    assert s["cases"] == {"confirmed": 3, "refuted": 2, "error": 1, "skipped": 2}
    assert s["environments"][0]["gpu"] == "none (CPU only)"


def test_merge_keeps_the_newest_result_per_case_and_environment(data, tmp_path):
    out = tmp_path / "a.jsonl"
    verify(data, "run", "--out", str(out), "--record", "fake-mask-causal")
    first = runner.read_results(out)
    newer = dict(first[0], finished_at="2999-01-01T00:00:00+00:00", status="refuted", reason="changed")
    other = tmp_path / "b.jsonl"
    other.write_text(json.dumps(newer) + "\n")
    body = res.merge_files([out, other], tmp_path / "m.json")
    got = {r["case"]: r for r in body["results"]}
    assert got[first[0]["case"]]["status"] == "refuted"
    # merging a merged file again changes nothing
    again = res.merge_files([tmp_path / "m.json"], tmp_path / "m2.json")
    assert again["results"] == body["results"]


def test_case_discovery_rejects_bad_files(tmp_path):
    records = runner.load_records(FAKE)
    bad = tmp_path / "fake"
    bad.mkdir()
    (bad / "fake-hang.py").write_text("def control(ctx):\n    pass\n")
    with pytest.raises(spec.CaseError, match="no reproduce"):
        spec.discover(tmp_path, records)
    (bad / "fake-hang.py").write_text("REQUIRES = {'gpu': True}\ndef reproduce(ctx):\n    pass\n")
    with pytest.raises(spec.CaseError, match="unknown requirement"):
        spec.discover(tmp_path, records)
    (bad / "fake-hang.py").write_text("def reproduce(ctx):\n    pass\n")
    (bad / "no-such-record.py").write_text("def reproduce(ctx):\n    pass\n")
    with pytest.raises(spec.CaseError, match="no record"):
        spec.discover(tmp_path, records)


def test_a_step_may_be_a_shared_helper_bound_to_a_step_name(tmp_path):
    """Records that give the same fix bind one helper's function instead of writing the step again."""
    records = runner.load_records(FAKE)
    area = tmp_path / "fake"
    area.mkdir()
    (area / "fake-hang.py").write_text("import os.path\nSHARED = 3\n\ndef reproduce(ctx):\n    pass\n\n"
                                      "fix_1 = os.path.join\nfix_2 = SHARED_NAME\nfix_3 = 3\n")
    steps = [c.step for c in spec.discover(tmp_path, records)]
    assert steps == ["reproduce", "fix_1", "fix_2"], "a name or attribute binds a step; a constant does not"


def test_arch_specs():
    assert spec.arch_matches("sm90", (9, 0)) and not spec.arch_matches("sm90", (10, 0))
    assert spec.arch_matches("sm100+", (12, 0)) and not spec.arch_matches("sm100+", (9, 0))
    assert spec.arch_matches("sm80-sm90", (8, 6)) and spec.arch_matches("sm80-sm90", (9, 0))
    assert not spec.arch_matches("sm80-sm90", (10, 0))
    assert spec.arch_matches(["sm80", "sm120+"], (12, 1))


def test_a_record_is_confirmed_only_when_its_error_reproduced():
    def result(case, status, env="e1"):
        return {"case": case, "record": case.split(":")[0], "status": status, "env_id": env, "backend": "b",
                "reason": None, "observed": None}

    body = {"environments": {"e1": {"gpu": "G", "arch": "sm90", "torch": "2.11", "cuda": "13.0"}, "e2": {}},
            "results": [result("a:reproduce", "skipped"), result("a:fix-1", "confirmed"),
                        result("b:reproduce", "confirmed"), result("b:control", "skipped"),
                        result("c:reproduce", "confirmed"), result("c:fix-1", "refuted", env="e2"),
                        result("d:reproduce", "skipped"), result("d:reproduce", "confirmed", env="e2")]}
    verdicts = res.record_verdicts(body)
    assert {k: v["status"] for k, v in verdicts.items()} == {"a": "skipped", "b": "confirmed", "c": "refuted",
                                                             "d": "confirmed"}
    assert verdicts["b"]["cases"] == ["b:reproduce", "b:control"]
    assert "G (sm90)" in verdicts["b"]["note"] and "control skipped" in verdicts["b"]["note"]
    assert verdicts["d"]["environments"] == ["e1", "e2"]


def test_one_worker_per_backend_is_reused_and_replaced_after_a_fault(full_run):
    _, _, r = full_run
    pids = {c: x.get("worker_pid") for c, x in r.items()}
    # steps of a backend share a worker (compiled kernels are reused) ...
    assert pids["fake-mask-causal:reproduce"] == pids["fake-mask-causal:fix-1"] == pids["fake-mask-causal:control"]
    assert pids["fake-kernel-not-used:reproduce"] != pids["fake-mask-causal:reproduce"]  # another backend
    # ... until a step poisons the device: recorded as an error, and the next step gets a fresh worker
    fault = r["fake-device-fault:reproduce"]
    assert fault["status"] == "error" and "illegal memory access" in fault["reason"]
    assert r["fake-device-fault:control"]["status"] == "confirmed"
    assert pids["fake-device-fault:control"] != fault["worker_pid"]


def test_backends_run_concurrently_with_jobs(data, tmp_path):
    out = tmp_path / "j.jsonl"
    verify(data, "run", "--jobs", "2", "--out", str(out), "--record", "fake-mask-causal",
           "--record", "fake-kernel-not-used")
    r = by_case(out)
    assert len(r) == 5 and all(x["status"] == "confirmed" for x in r.values())
    assert len(out.read_text().splitlines()) == 5  # one whole line per case, none interleaved


def test_errkb_commit_is_a_sha_or_nothing(tmp_path, monkeypatch):
    from errkb.verify.env import errkb_commit

    monkeypatch.delenv("ERRKB_COMMIT", raising=False)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert errkb_commit(tmp_path) is None  # a repository with no commit has no HEAD to report
    assert errkb_commit(tmp_path / "not-a-repo") is None
    monkeypatch.setenv("ERRKB_COMMIT", "0123abc")
    assert errkb_commit(tmp_path) == "0123abc"  # given explicitly, e.g. for a copied tree on a GPU box


def test_backend_filter_picks_the_worker_group_not_the_records_tags():
    from errkb.verify.spec import Case

    records = {"r1": {"backends": ["sglang"]}, "r2": {"backends": ["sglang"]}}
    cases = [Case("r1:reproduce", "r1", "reproduce", "sglang", "a.py"),
             Case("r2:reproduce", "r2", "reproduce", "sglang-server", "b.py")]
    assert [c.id for c in runner.select(cases, records, backends={"sglang"})] == ["r1:reproduce"]
    assert [c.id for c in runner.select(cases, records, backends={"sglang-server"})] == ["r2:reproduce"]


def test_logged_lines_are_checked_like_warnings():
    import logging

    from errkb.verify.case import Context, Refuted

    ctx = Context({"error_class": "logging.WARNING", "template": "Cannot use FA version {v}", "kind": "warning"},
                  "reproduce")
    log = logging.getLogger("errkb.tests.logged")

    def warns(version, level=logging.WARNING):
        log.log(level, "Cannot use FA version %s", version)
        return version

    assert ctx.expect_logged(log.name, warns, 3) == ("Cannot use FA version 3", 3)
    with pytest.raises(Refuted):
        ctx.expect_logged(log.name, warns, 3, logging.INFO)  # the right text at the wrong level
    assert ctx.not_logged(log.name, lambda: 5) == 5
    with pytest.raises(Refuted):
        ctx.not_logged(log.name, warns, 2)  # a claimed-good call that still logs the message
    with pytest.raises(Refuted):
        ctx.not_logged(log.name, lambda: 1 / 0)  # or that fails


def test_a_step_needs_its_files_packages_and_its_own(tmp_path):
    records = runner.load_records(FAKE)
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "fake-hang.py").write_text(
        "REQUIRES = {'packages': ['torch'], 'cpu': True}\n"
        "STEP_REQUIRES = {'control': {'cuda': True, 'arch': 'sm90', 'packages': ['flash_attn.cute']}}\n"
        "def reproduce(ctx):\n    pass\n\ndef control(ctx):\n    pass\n")
    needs = {c.step: c.requires for c in spec.discover(tmp_path, records)}
    assert needs["reproduce"] == {"packages": ["torch"], "cpu": True}
    assert needs["control"] == {"packages": ["torch", "flash_attn.cute"], "cpu": True, "cuda": True, "arch": "sm90"}


def test_a_stand_in_imports_but_calling_it_is_an_error_not_a_verdict():
    import sys

    from errkb.verify import standin
    from errkb.verify.case import Context, Refuted

    ctx = Context({"error_class": "ValueError", "template": "head size {n} is not supported", "kind": "error"},
                  "reproduce")
    with standin.standing_in(ctx, "errkb_fake_kernels.ops") as added:
        assert added == ["errkb_fake_kernels", "errkb_fake_kernels.ops"]
        from errkb_fake_kernels.ops import merge_state  # noqa: PLC0415 - the stand-in under test

        assert standin.is_standin(sys.modules["errkb_fake_kernels"])
        with pytest.raises(standin.StandInReached):
            ctx.expect_error(merge_state, 1, 2)  # reaching compiled code propagates: an error

        def checks(n):
            raise ValueError(f"head size {n} is not supported")

        ctx.expect_error(checks, 88)  # a check before any compiled call still counts
        with pytest.raises(Refuted):
            ctx.expect_error(lambda: None)
    assert "errkb_fake_kernels" not in sys.modules
    assert "errkb_fake_kernels" in " ".join(ctx.notes)


def test_merge_takes_into_before_or_after_the_files(full_run, tmp_path):
    _, out, _ = full_run
    cli = [sys.executable, "-c", "import sys; from errkb.cli import main; sys.exit(main(sys.argv[1:]))"]
    for n, cmd in enumerate([
            [sys.executable, "-m", "errkb.verify", "merge", "--no-records", "--into", str(tmp_path / "a.json"), str(out)],
            [*cli, "verify", "merge", "--no-records", "--into", str(tmp_path / "b.json"), str(out), str(out)],
            [*cli, "verify", "merge", str(out), "--into", str(tmp_path / "c.json"), "--no-records"]]):
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, (n, proc.stderr)
    assert all(json.loads((tmp_path / f"{x}.json").read_text())["results"] for x in "abc")
    bad = subprocess.run([*cli, "verify", "merge", str(out), "--bogus"], cwd=REPO, capture_output=True, text=True)
    assert bad.returncode == 2 and "unrecognized arguments: --bogus" in bad.stderr


def test_a_step_that_finds_it_cannot_run_inside_a_check_is_skipped_not_refuted():
    """A payload missing on the machine is found inside the checked call: a skip, never a verdict."""
    from errkb.verify.case import Context, Skip

    ctx = Context({"error_class": "ImportError", "template": "undefined symbol: _Z{symbol}", "kind": "error"},
                  "reproduce")

    def needs_a_payload():
        ctx.skip(".gpu/xf is not here")

    for check in (ctx.expect_error, ctx.expect_warning, ctx.call):
        with pytest.raises(Skip):
            check(needs_a_payload)
    with pytest.raises(Skip):
        ctx.expect_logged("xformers", needs_a_payload)
