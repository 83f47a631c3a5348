"""verification/device/compare.py: a re-run's results against the committed ones, per case and arch."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "verification" / "device"))
import compare  # noqa: E402


def result(case, status, env_id, finished_at, reason=None):
    return {"case": case, "status": status, "env_id": env_id, "finished_at": finished_at, "reason": reason}


def write_committed(tmp_path: Path) -> Path:
    data = {"environments": {"h200": {"arch": "sm90"}, "cpu": {"arch": "cpu"}},
            "results": [result("a:reproduce", "error", "h200", "2026-12-01T00:00:00", "harness"),
                        result("a:reproduce", "confirmed", "h200", "2026-12-02T00:00:00"),
                        result("b:reproduce", "confirmed", "h200", "2026-12-01T00:00:00"),
                        result("c:fix-1", "skipped", "h200", "2026-12-01T00:00:00", "no payload"),
                        result("d:reproduce", "confirmed", "cpu", "2026-12-01T00:00:00")]}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    return path


def fresh(tmp_path: Path, rows: list[tuple[str, str]]) -> Path:
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps({"case": c, "status": s, "env": {"arch": "sm90"}, "reason": None}) + "\n"
                            for c, s in rows))
    return path


def test_the_newest_committed_result_of_the_same_arch_is_the_baseline(tmp_path, capsys):
    results = write_committed(tmp_path)
    rc = compare.main(["--results", str(results),
                       str(fresh(tmp_path, [("a:reproduce", "confirmed"), ("b:reproduce", "confirmed"),
                                            ("d:reproduce", "confirmed")]))])
    out = capsys.readouterr().out
    assert rc == 0
    assert "3 fresh results: no committed result 1, same 2" in out


def test_a_changed_verdict_fails_and_a_skip_is_reported_apart(tmp_path, capsys):
    results = write_committed(tmp_path)
    rc = compare.main(["--results", str(results),
                       str(fresh(tmp_path, [("b:reproduce", "refuted"), ("c:fix-1", "confirmed")]))])
    out = capsys.readouterr().out
    assert rc == 1
    assert "different 1" in out and "skipped on one side 1" in out
    assert "b:reproduce: committed confirmed (-) -> now refuted (-)" in out
