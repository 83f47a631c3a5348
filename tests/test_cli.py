"""The console script, run as users run it."""

import json
import subprocess
import sys


def errkb(*args, check=True):
    proc = subprocess.run([sys.executable, "-m", "errkb.cli", *args], capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_stats_json_counts_records_sites_and_packages(dataset):
    stats = json.loads(errkb("stats", "--format", "json").stdout)
    assert stats["records"] == len(dataset.records)
    assert stats["sites"] == len(dataset.sites)
    sglang = stats["packages"]["sglang"]
    assert sglang["versions"] == dataset.harvested_versions("sglang")
    assert sglang["sites"] == sum(1 for s in dataset.sites.values() if s.package == "sglang")


def test_validate_passes_on_the_shipped_dataset():
    assert "0 errors" in errkb("validate").stdout


def test_validate_fails_on_a_broken_copy(data_copy):
    record = next(data_copy.glob("records/*/*.json"))
    record.write_text("[]")
    proc = errkb("--data-dir", str(data_copy), "validate", check=False)
    assert proc.returncode == 1 and "model:" in proc.stderr


def test_drift_between_real_releases(dataset):
    old, new = dataset.harvested_versions("flash-attn-4")[-2:]
    out = json.loads(errkb("drift", "flash-attn-4", old, new, "--format", "json").stdout)
    assert out["old"] == old and out["new"] == new
    assert out["added"] and out["unchanged"] > 100


def test_drift_of_an_unknown_version_is_a_usage_error():
    proc = errkb("drift", "sglang", "0.0.1", "0.5.23", check=False)
    assert proc.returncode == 2 and "0.0.1" in proc.stderr


def test_sites_finds_a_message():
    out = errkb("sites", "non-consecutive batch indices", "--package", "sglang").stdout
    assert "flash_attention_v4.py" in out
