"""`errkb update`: which registry releases are missing, the SHA-256 check, and harvesting them,
all from recorded PyPI answers (tests/data/update/) and local files: no network."""

import copy
import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from errkb import store, update
from errkb.cli import main
from errkb.drift import drift
from errkb.packages import Registry

FIXTURES = Path(__file__).parent / "data" / "update"
TORCH = Registry(pypi="torch", files=("torch-*-cp312-*macosx_*_arm64.whl", "torch-*-cp311-*macosx_*_arm64.whl"))
FA4 = Registry(pypi="flash-attn-4", files=("flash_attn_4-*-py3-none-any.whl",))


def pypi(project: str) -> dict:
    return json.loads((FIXTURES / f"pypi-{project}.json").read_text())


def test_missing_releases_are_those_after_the_newest_harvested_oldest_first():
    missing, older = update.missing_releases(["2.9.1", "2.10.0", "2.11.0"], pypi("torch"), TORCH, "v{version}")
    assert [r.version for r in missing] == ["2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1", "2.15.0"]
    assert older == 1  # 2.1.0: a skipped old release is counted, not listed
    first = missing[0]
    assert first.file.filename == "torch-2.12.0-cp312-cp312-macosx_14_0_arm64.whl"  # the first glob wins
    assert first.file.sha256 == next(f["digests"]["sha256"] for f in pypi("torch")["releases"]["2.12.0"]
                                     if f["filename"] == first.file.filename)
    assert first.uploaded.startswith("2026-")


def test_yanked_and_pre_releases_are_skipped_unless_pre_releases_were_harvested():
    index = copy.deepcopy(pypi("torch"))
    index["releases"]["2.16.0rc1"] = copy.deepcopy(index["releases"]["2.15.0"])
    for f in index["releases"]["2.15.0"]:
        f["yanked"] = True
    missing, _ = update.missing_releases(["2.14.1"], index, TORCH, None)
    assert [r.version for r in missing] == []
    # flash-attn-4 has only betas: once one is harvested, newer betas count; its 0.0.1 was yanked
    missing, older = update.missing_releases(["4.0.0b20", "4.0.0b30"], pypi("flash-attn-4"), FA4, None)
    assert [r.version for r in missing] == ["4.0.0b31", "4.0.0b36"] and older == 0


def test_a_git_tag_package_names_the_tag_and_nothing_harvested_lists_the_latest():
    git = Registry(pypi="torch", git_tag=True)
    missing, older = update.missing_releases([], pypi("torch"), git, "v{version}")
    assert [(r.version, r.tag, r.file) for r in missing] == [("2.15.0", "v2.15.0", None)] and older == 0


@pytest.fixture
def small_data(tmp_path):
    """A data folder with torch harvested to 2.11.0 and a package that is on no registry."""
    data = tmp_path / "data"
    data.mkdir()
    scope = {"repo": "pytorch/pytorch", "tag": "v{version}", "include": ["torch/nn/attention/**"]}
    (data / "packages.json").write_text(json.dumps({
        "torch": {**scope, "registry": {"pypi": "torch", "files": list(TORCH.files)}},
        "pytorch-aten": scope}))
    for version in ("2.9.1", "2.10.0", "2.11.0"):
        store.record_harvest(data, "torch", version, {})
    store.record_harvest(data, "pytorch-aten", "0.1+g21c3369", {})
    return data


def test_dry_run_prints_a_row_per_package_and_the_files_it_would_harvest(small_data, monkeypatch, capsys):
    monkeypatch.setattr(update, "fetch_pypi", pypi)
    assert main(["--data-dir", str(small_data), "update", "--dry-run", "--limit", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    torch_row = next(line for line in out if line.startswith("torch "))
    assert torch_row.split()[:5] == ["torch", "pypi:torch", "3", "2.11.0", "1"]
    assert torch_row.endswith("6: 2.12.0, 2.12.1, 2.13.0, 2.14.0, 2.14.1, 2.15.0")
    assert "not released on a registry" in next(line for line in out if line.startswith("pytorch-aten"))
    plan = [line for line in out if line.startswith("  torch ")]
    assert len(plan) == 2 and "torch-2.12.0-cp312-cp312-macosx_14_0_arm64.whl  sha256:" in plan[0]

    assert main(["--data-dir", str(small_data), "update", "--dry-run", "--format", "json", "--package", "torch"]) == 0
    (status,) = json.loads(capsys.readouterr().out)
    assert status["newest_harvested"] == "2.11.0" and len(status["missing"]) == 6


def test_a_registry_that_cannot_be_read_is_reported_on_its_row(small_data, monkeypatch, capsys):
    def offline(project):
        raise update.UpdateError(f"cannot read https://pypi.org/pypi/{project}/json: no network")

    monkeypatch.setattr(update, "fetch_pypi", offline)
    assert main(["--data-dir", str(small_data), "update", "--dry-run"]) == 1
    assert "(cannot read https://pypi.org/pypi/torch/json: no network)" in capsys.readouterr().out


def test_a_download_whose_sha256_differs_from_the_registry_is_refused(tmp_path):
    payload = FIXTURES / "pypi-flash-attn-4.json"  # any local file stands in for a release file
    good = hashlib.sha256(payload.read_bytes()).hexdigest()
    bad = update.ReleaseFile("x-1.0.tar.gz", payload.as_uri(), "0" * 64)
    with pytest.raises(update.UpdateError, match="is not the registry's 0000"):
        update.download(bad, tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []  # nothing half-checked is kept
    path = update.download(update.ReleaseFile("x-1.0.tar.gz", payload.as_uri(), good), tmp_path / "cache")
    assert path.read_bytes() == payload.read_bytes()
    with pytest.raises(update.UpdateError, match="refusing"):
        update.download(update.ReleaseFile("../x.tar.gz", payload.as_uri(), good), tmp_path / "cache")


def toy_wheel(path: Path, text: str) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("toy/attn.py", text)
    return path


def test_harvesting_a_missing_release_reports_drift_and_the_records_it_touches(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "packages.json").write_text(json.dumps({"toy": {
        "repo": "example/toy", "tag": "v{version}", "include": ["toy/**"],
        "registry": {"pypi": "toy", "files": ["toy-*-py3-none-any.whl"]}}}))
    old = toy_wheel(tmp_path / "toy-1.0-py3-none-any.whl",
                    'def f(d):\n    raise ValueError(f"head_dim {d} too large")\n'
                    'def g():\n    raise RuntimeError("paged KV is not supported")\n')
    new = toy_wheel(tmp_path / "toy-1.1-py3-none-any.whl",
                    'def f(d):\n    raise ValueError(f"head_dim {d} too large")\n')
    update.harvest("toy", "1.0", str(old), data)
    index = {"releases": {"1.1": [{"filename": new.name, "url": new.as_uri(), "yanked": False,
                                   "digests": {"sha256": hashlib.sha256(new.read_bytes()).hexdigest()},
                                   "upload_time_iso_8601": "2026-11-30T10:00:00Z"}]}}
    (status,) = update.package_statuses(data, fetch=lambda project: index)
    cfg = update.load_packages(data)["toy"]
    (item,) = update.harvest_missing(cfg, status, data, tmp_path / "cache")
    assert item.pin == f"sha256:{index['releases']['1.1'][0]['digests']['sha256']}"
    assert [s.template for s in item.drift.removed] == ["paged KV is not supported"]
    assert store.read_manifest(data)["toy"]["1.1"]["sha256"] == item.pin.split(":")[1]
    text = update.format_harvested(item)
    assert "harvested toy 1.1 from toy-1.1-py3-none-any.whl" in text and "1 removed" in text


def test_a_git_tag_release_is_cloned_and_pinned_to_its_commit(tmp_path, monkeypatch):
    repo = tmp_path / "remote" / "example" / "toy"
    (repo / "toy").mkdir(parents=True)
    (repo / "toy" / "attn.py").write_text('raise ValueError("softcap is not supported")\n')
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "1.1"], check=True)
    subprocess.run(git + ["tag", "v1.1"], check=True)
    commit = subprocess.run(git + ["rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    monkeypatch.setattr(update, "GIT_URL", (tmp_path / "remote").as_uri() + "/{repo}")
    data = tmp_path / "data"
    data.mkdir()
    (data / "packages.json").write_text(json.dumps({"toy": {
        "repo": "example/toy", "tag": "v{version}", "include": ["toy/**"],
        "registry": {"pypi": "toy", "git_tag": True}}}))
    index = {"releases": {"1.1": [{"filename": "toy-1.1.tar.gz", "url": "unused", "yanked": False,
                                   "digests": {"sha256": "0" * 64}, "upload_time_iso_8601": "2026-11-30"}]}}
    (status,) = update.package_statuses(data, fetch=lambda project: index)
    (item,) = update.harvest_missing(update.load_packages(data)["toy"], status, data, tmp_path / "cache")
    assert item.pin == f"commit:{commit}" and item.drift_note == "first harvested version"
    assert store.read_manifest(data)["toy"]["1.1"]["source"] == "repo@v1.1"
    assert [s.template for s in store.read_sites(data, "toy")] == ["softcap is not supported"]


def test_record_changes_name_moved_vanished_and_appeared_sites(tmp_path):
    """Two versions of a toy package: one message moves file, one vanishes, one gains a copy."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "packages.json").write_text(json.dumps({"toy": {"repo": "e/toy", "tag": None, "include": ["toy/**"]}}))
    v1 = tmp_path / "v1"
    (v1 / "toy").mkdir(parents=True)
    (v1 / "toy" / "a.py").write_text('raise ValueError("moves away")\nraise ValueError("goes away")\n'
                                     'raise ValueError("gets a copy")\n')
    update.harvest("toy", "1.0", str(v1), data)
    v2 = tmp_path / "v2"
    (v2 / "toy").mkdir(parents=True)
    (v2 / "toy" / "a.py").write_text('raise ValueError("gets a copy")\n')
    (v2 / "toy" / "b.py").write_text('raise ValueError("moves away")\nraise ValueError("gets a copy")\n')
    update.harvest("toy", "2.0", str(v2), data)
    sites = store.read_sites(data, "toy")
    ids = {(s.path, s.template): s.id for s in sites}
    record = SimpleNamespace(id="toy-record", sites=[ids["toy/a.py", t] for t in ("moves away", "goes away", "gets a copy")])
    changes = update.record_changes([record], sites, drift(sites, "1.0", "2.0"))
    assert [(c.change, c.where) for c in changes] == [
        ("appeared", "toy/b.py:2"), ("moved", "toy/a.py:1 -> toy/b.py:1"), ("vanished", "toy/a.py:2")]


@pytest.mark.parametrize("args, message", [
    (["--limit", "0"], "expected a whole number of at least 1"),
    (["--limit", "two"], "expected a whole number of at least 1"),
    (["--format", "json"], "add --dry-run"),
    (["--dry-run", "--package", "nope"], "unknown package 'nope'"),
])
def test_bad_options_are_refused_with_a_clear_message(args, message):
    proc = subprocess.run([sys.executable, "-m", "errkb.cli", "update", *args], capture_output=True, text=True)
    assert proc.returncode == 2 and message in proc.stderr
    assert "Traceback" not in proc.stderr
