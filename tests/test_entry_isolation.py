"""What went wrong in the first H200 run of the entry-point steps must not be able to happen again:
a launch whose import fails half-way left the worker in a state no user has (a module run twice
registered its type twice), and the next step read that as the entry point's answer ("preempted").

Here a tiny fake project reproduces that shape: `fakelaunch.engine` registers a type in a registry
that outlives the failed import, then imports a compiled module that is not installed. Also the
pretend-CUDA rehearsal switch (errkb.verify.pretend) and merge's refusal of its results.
Nothing here needs torch or a GPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from errkb.verify import pretend, runner
from errkb.verify import results as res
from errkb.verify.case import Context, HarnessFailure, Refuted, Skip, harness_failure
from errkb.verify.standin import StandInReached

REPO = Path(__file__).resolve().parent.parent
RECORD = {"error_class": "ValueError", "template": "backend {name} needs an MLA model", "kind": "error"}

REGISTRY = '''
_types = set()

def register(name):
    if name in _types:
        raise RuntimeError(f"Type {name!r} is already registered as an opaque type")
    _types.add(name)
'''
ENGINE = '''
from fakelaunch import registry

registry.register("fakelaunch.engine.LayerName")
import fakelaunch_compiled_ops  # noqa: E402,F401 - not installed: the import fails half-way


def serve(argv):
    raise ValueError("backend trtllm_mla needs an MLA model")
'''
CASE = '''
import importlib

BACKEND = "fakeserve"


def reproduce(ctx):
    pass


def entry_vllm_engine(ctx):
    ctx.expect_first(lambda: importlib.import_module("fakelaunch.engine").serve([]))
'''


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """The fake project on sys.path (for in-process tests) and as a folder (for the runner)."""
    site = tmp_path / "site"
    (site / "fakelaunch").mkdir(parents=True)
    (site / "fakelaunch" / "__init__.py").write_text("")
    (site / "fakelaunch" / "registry.py").write_text(REGISTRY)
    (site / "fakelaunch" / "engine.py").write_text(ENGINE)
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in [m for m in sys.modules if m.split(".")[0] == "fakelaunch"]:
        del sys.modules[name]


def _launch():
    import importlib

    return importlib.import_module("fakelaunch.engine").serve([])


# ------------------------------------------------------------------ the rule, in one process


def test_a_half_failed_import_then_its_second_run_give_no_verdict(project):
    """The H200 sequence in one process: the first launch skips on the missing module; the second
    runs the module again, which registers its type twice. That is the harness, not the entry
    point: an error with the reason, never `preempted`."""
    first = Context(RECORD, "entry_vllm_engine")
    with pytest.raises(Skip, match="fakelaunch_compiled_ops"):
        first.expect_first(_launch)
    second = Context(RECORD, "entry_vllm_engine")
    with pytest.raises(HarnessFailure, match="registered twice in one process"):
        second.expect_first(_launch)
    assert second.observed["entry"] == "error" and "already registered" in second.observed["message"]


def test_an_error_raised_while_a_module_imports_is_no_verdict(tmp_path, monkeypatch):
    (tmp_path / "fake_import_time.py").write_text("raise ValueError('unsupported platform detected at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ctx = Context(RECORD, "entry_sglang_server")
    with pytest.raises(HarnessFailure, match="raised while importing .*fake_import_time.py"):
        ctx.expect_first(lambda: __import__("fake_import_time"))
    sys.modules.pop("fake_import_time", None)


def test_a_failure_of_the_import_system_is_no_verdict():
    ctx = Context(RECORD, "entry_vllm_engine")
    with pytest.raises(HarnessFailure, match="cannot import name"):
        ctx.expect_first(lambda: exec("from json import no_such_name_here"))


def test_a_called_stand_in_is_no_verdict():
    def launch():
        raise StandInReached("sgl_kernel.int8_scaled_mm is a stand-in for a compiled function and was called")

    ctx = Context(RECORD, "entry_sglang_server")
    with pytest.raises(HarnessFailure, match="stand-in"):
        ctx.expect_first(launch)


def test_what_the_entry_point_decides_is_still_a_verdict():
    """The classification never swallows real answers: the record's own message, even from an
    import, is reached; a library's deliberate ImportError or a plain refusal is preempted."""
    assert harness_failure(ValueError("TRTLLM MLA backend is only supported on Blackwell GPUs")) is None
    assert harness_failure(ImportError("the package for FlashAttention2 doesn't seem to be installed.")) is None
    ctx = Context(RECORD, "entry_vllm_engine")
    with pytest.raises(Refuted, match="preempted"):
        ctx.expect_first(lambda: (_ for _ in ()).throw(RuntimeError("CUDA out of memory")))


def test_the_records_message_raised_during_an_import_is_reached(tmp_path, monkeypatch):
    (tmp_path / "fake_reached_at_import.py").write_text("raise ValueError('backend fa3 needs an MLA model')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ctx = Context(RECORD, "entry_vllm_engine")
    ctx.expect_first(lambda: __import__("fake_reached_at_import"))
    assert ctx.observed["entry"] == "reached"
    sys.modules.pop("fake_reached_at_import", None)


# ------------------------------------------------------------------ the rule, through the runner


def _write_cases(tmp_path: Path) -> tuple[Path, Path]:
    data, cases = tmp_path / "data", tmp_path / "cases"
    (data / "records" / "fake").mkdir(parents=True)
    (cases / "fake").mkdir(parents=True)
    for rid in ("fake-entry-one", "fake-entry-two"):
        body = {"id": rid, "title": rid, "kind": "error", "backends": ["fakeserve"], **RECORD,
                "verification": {"status": "unverified", "cases": [], "note": None}}
        (data / "records" / "fake" / f"{rid}.json").write_text(json.dumps(body))
        (cases / "fake" / f"{rid}.py").write_text(CASE)
    return data, cases


def test_each_entry_step_runs_in_a_process_of_its_own(project, tmp_path):
    data, cases = _write_cases(tmp_path)
    out = tmp_path / "r.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project), str(REPO)])}
    proc = subprocess.run([sys.executable, "-m", "errkb.verify", "--data-dir", str(data), "--cases", str(cases),
                           "run", "--step", "entry-*", "--out", str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    got = {r["case"]: r for r in runner.read_results(out)}
    assert set(got) == {"fake-entry-one:entry-vllm-engine", "fake-entry-two:entry-vllm-engine"}
    # Both launches fail alike on the missing module; the second never sees the first's registration.
    for r in got.values():
        assert r["status"] == "skipped" and "fakelaunch_compiled_ops" in r["reason"], r
    assert len({r["worker_pid"] for r in got.values()}) == 2
    assert "counts: confirmed 0, refuted 0, error 0, skipped 2" in proc.stdout  # the run's summary, by status


def test_entry_groups_are_one_per_step_and_report_under_their_backend(tmp_path):
    data, cases = _write_cases(tmp_path)
    found = runner.select(runner.all_cases(cases, data)[0], {}, steps=["entry-*"])
    groups = {runner.worker_group(c) for c in found}
    assert len(groups) == 2 and {runner.group_label(g) for g in groups} == {"fakeserve:entry"}


# ------------------------------------------------------------------ pretend CUDA


def test_pretend_cuda_reads_major_minor(monkeypatch):
    monkeypatch.setenv(pretend.ENV, "9.0")
    assert pretend.capability() == (9, 0)
    assert "not a GPU result" in pretend.note()
    monkeypatch.setenv(pretend.ENV, "sm90")
    with pytest.raises(ValueError, match="MAJOR.MINOR"):
        pretend.capability()
    monkeypatch.delenv(pretend.ENV)
    assert pretend.capability() is None and pretend.apply() is None


def test_pretend_cuda_answers_torchs_device_queries(monkeypatch):
    cuda = types.SimpleNamespace(is_available=lambda: False)
    fake_torch = types.SimpleNamespace(cuda=cuda, version=types.SimpleNamespace(cuda=None))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    pretend._patch_torch((9, 0))
    assert cuda.is_available() and cuda.device_count() == 1
    assert cuda.get_device_capability() == (9, 0) and cuda.get_device_capability(0) == (9, 0)
    assert "pretend" in cuda.get_device_name(0) and cuda.get_device_properties(0).major == 9
    assert cuda.synchronize() is None and fake_torch.version.cuda == "13.0"


def test_pretend_cuda_tells_vllms_nvml_detection_too(tmp_path, monkeypatch):
    """vLLM asks NVML, not torch: its CUDA plugin answers yes once its module has loaded."""
    pkg = tmp_path / "vllm" / "platforms"
    pkg.mkdir(parents=True)
    (tmp_path / "vllm" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("def cuda_platform_plugin():\n    return None\n\n"
                                     "builtin_platform_plugins = {'cuda': cuda_platform_plugin}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    finder = pretend._AfterImport()
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    try:
        import vllm.platforms as platforms

        assert platforms.builtin_platform_plugins["cuda"]() == "vllm.platforms.cuda.CudaPlatform"
    finally:
        for name in ("vllm.platforms", "vllm"):
            sys.modules.pop(name, None)


def test_rehearsal_results_are_marked_and_never_merged(tmp_path, monkeypatch):
    from errkb.verify.env import describe, probe

    monkeypatch.setenv(pretend.ENV, "9.0")
    env = probe()
    assert env["pretend_cuda"] == "9.0" and "rehearsal" in describe(env)
    line = {"schema": 1, "case": "r:entry-vllm-engine", "record": "r", "step": "entry_vllm_engine",
            "backend": "vllm", "status": "confirmed", "env_id": "abc", "env": env, "finished_at": "x"}
    src = tmp_path / "r.jsonl"
    src.write_text(json.dumps(line) + "\n")
    into = tmp_path / "results.json"
    with pytest.raises(res.RehearsalResults, match="pretend-CUDA"):
        res.merge_files([src], into)
    assert not into.exists()


# ------------------------------------------------------------------ the rehearsal's tools


def _result(case, status, **kw):
    return json.dumps({"case": case, "record": case.split(":")[0], "status": status, "reason": kw.get("reason"),
                       "observed": kw.get("observed"), "env": {"pretend_cuda": "9.0"}})


def test_the_rehearsal_summary_fails_unless_every_step_got_a_verdict(tmp_path):
    script = REPO / "verification" / "device" / "entry_summary.py"
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join([
        _result("a:entry-vllm-engine", "confirmed", observed={"entry": "reached", "class": "ValueError", "message": "m"}),
        _result("b:entry-vllm-engine", "refuted", observed={"entry": "preempted", "class": "ValueError", "message": "n"}),
        _result("b:reproduce", "error", reason="not an entry step")]) + "\n")
    proc = subprocess.run([sys.executable, str(script), str(good)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 of 2 entry steps got a verdict" in proc.stdout and "rehearsal" in proc.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + _result("c:entry-vllm-engine", "skipped", reason="needs module 'x'") + "\n")
    proc = subprocess.run([sys.executable, str(script), str(bad)], capture_output=True, text=True)
    assert proc.returncode == 1 and "needs module 'x'" in proc.stdout and "2 of 3" in proc.stdout


def test_the_vllm_entry_payload_takes_what_xgrammar_and_fastapi_import_from_the_lock():
    """The first H200 run skipped five vLLM steps on xgrammar's missing tvm_ffi: the vLLM entry
    folder must take apache-tvm-ffi (and fastapi's starlette, vLLM's pydantic) from the lock."""
    import re

    script = (REPO / "verification" / "device" / "entry.sh").read_text()
    pattern = re.search(r"^VLLM_FROM_SGLANG='([^']+)'", script, re.M).group(1)
    lock = json.loads((REPO / "verification" / "device" / "payload.lock.json").read_text())
    files = [f["file"] for f in lock["files"] if f.get("payloads", {}).get("sglang-server") == "wheel"]
    taken = {f.split("-")[0] for f in files if re.search(pattern, f)}
    assert {"apache_tvm_ffi", "starlette", "pydantic", "pydantic_core"} <= taken


def test_a_cuda_step_reimports_a_module_that_registered_a_custom_op(monkeypatch):
    """The H200's "Duplicate op name: mm_encoder_attn": a module set aside for a CUDA step is
    imported afresh and registers its CustomOp again; its name must be free then, and the
    registry must hold the first class again afterwards."""
    from verification.cases.vllm._vllm_cuda import set_aside_custom_ops

    name = "vllm.model_executor.layers.attention.mm_encoder_attention"
    first, other = type("MMEncoderAttention", (), {"__module__": name}), type("Linear", (), {"__module__": "x"})
    custom_op = types.SimpleNamespace(op_registry={"mm_encoder_attn": first, "linear": other}, op_registry_oot={})
    monkeypatch.setitem(sys.modules, "vllm.model_executor.custom_op", custom_op)

    put_back = set_aside_custom_ops({name: object()})
    assert custom_op.op_registry == {"linear": other}
    custom_op.op_registry["mm_encoder_attn"] = type("MMEncoderAttention", (), {"__module__": name})
    put_back()
    assert custom_op.op_registry == {"mm_encoder_attn": first, "linear": other}


def test_setting_aside_custom_ops_without_vllm_loaded_changes_nothing(monkeypatch):
    from verification.cases.vllm._vllm_cuda import set_aside_custom_ops

    monkeypatch.delitem(sys.modules, "vllm.model_executor.custom_op", raising=False)
    set_aside_custom_ops({"vllm.model_executor.layers.attention": object()})()
