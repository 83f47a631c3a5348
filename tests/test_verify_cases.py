"""The project's own verification cases: every file is well formed and every step names a real
record; where an interpreter with torch is available (`ERRKB_TORCH_PYTHON`, or this one), the
cases that run on the CPU are run for real and must confirm their record."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from errkb.verify import runner, spec

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "verification" / "cases"
DATA = REPO / "data"


def test_every_case_file_loads_and_names_a_record():
    records = runner.load_records(DATA)
    cases = spec.discover(CASES, records)
    assert cases, "no cases found"
    files = {Path(c.file).stem for c in cases}
    assert files == {p.stem for p in CASES.glob("*/*.py") if not p.name.startswith("_")}
    for c in cases:
        assert c.record in records
        assert Path(c.file).parent.name == records[c.record]["area"], c.id
        assert c.requires, f"{c.id}: declare what the case needs (REQUIRES)"


def test_records_list_only_cases_that_exist():
    ids = {c.id for c in spec.discover(CASES, runner.load_records(DATA))}
    for path in DATA.glob("records/*/*.json"):
        verification = json.loads(path.read_text()).get("verification") or {}
        missing = set(verification.get("cases", [])) - ids
        assert not missing, f"{path.name}: unknown cases {sorted(missing)}"


def _torch_python() -> str | None:
    candidate = os.environ.get("ERRKB_TORCH_PYTHON")
    if candidate:
        return candidate
    probe = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
    return sys.executable if probe.returncode == 0 else None


CPU_RECORDS = ["sdpa-attn-mask-with-is-causal", "sdpa-causal-lower-right-nan", "flex-cpu-backward",
               "flex-gqa-enable-flag-missing", "flex-block-mask-smaller-than-input", "flex-mod-wrong-arg-count",
               "sdpa-argument-not-tensor", "mha-4d-input", "mha-2d-attn-mask-shape", "attention-lowp-output-not-close"]


def test_cpu_cases_confirm_with_real_torch(tmp_path):
    python = _torch_python()
    if python is None:
        pytest.skip("no interpreter with torch: set ERRKB_TORCH_PYTHON (torch is not a test dependency)")
    data = tmp_path / "data"
    shutil.copytree(DATA / "records", data / "records")
    out = tmp_path / "cpu.jsonl"
    cmd = [sys.executable, "-m", "errkb.verify", "--data-dir", str(data), "run", "--python", python,
           "--out", str(out)] + [a for r in CPU_RECORDS for a in ("--record", r)]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    results = runner.read_results(out)
    assert {r["record"] for r in results} == set(CPU_RECORDS)
    bad = [(r["case"], r["status"], r["reason"]) for r in results if r["status"] != "confirmed"]
    assert not bad, bad
    assert all(r["env"]["torch"] for r in results)
