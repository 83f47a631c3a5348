"""Harvest two versions of a small package into a scratch dataset, then diff them."""

import json
import textwrap
from pathlib import Path

import pytest

from errkb import store
from errkb.drift import drift
from errkb.harvest import harvest

V1 = {
    "toy/attn.py": '''
        def run(head_dim, page_size):
            if head_dim > 256:
                raise ValueError(f"head_dim {head_dim} is too large")
            if page_size % 16:
                raise ValueError(f"page_size {page_size} must be a multiple of 16")
            raise NotImplementedError("sliding window is not supported")
    ''',
    "toy/old.py": '''
        def legacy():
            raise RuntimeError("legacy path was called")
    ''',
}
V2 = {
    "toy/attn.py": '''
        # two new lines shift everything down by two

        def run(head_dim, page_size):
            if head_dim > 256:
                raise ValueError(f"head_dim {head_dim} is too large")
            if page_size % 16:
                raise ValueError(f"page_size {page_size} must be a multiple of 16 on this GPU")
            raise NotImplementedError("softcap is not supported")
    ''',
    "toy/new.py": '''
        def legacy():
            raise RuntimeError("legacy path was called")
    ''',
    "toy/tests/test_x.py": 'raise ValueError("from a test, out of scope")\n',
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.fixture
def toy_data(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "packages.json").write_text(json.dumps({"toy": {
        "repo": "example/toy", "tag": "v{version}", "path_map": [["toy/", "src/toy/"]],
        "include": ["toy/**"], "exclude": ["**/tests/**"]}}))
    harvest("toy", "1.0", str(write_tree(tmp_path / "v1", V1)), data)
    harvest("toy", "1.1", str(write_tree(tmp_path / "v2", V2)), data)
    return data


def test_sites_keep_every_version_with_its_lines(toy_data):
    sites = {s.template: s for s in store.read_sites(toy_data, "toy")}
    head = sites["head_dim {head_dim} is too large"]
    assert head.path == "src/toy/attn.py"
    assert [(o.version, o.lines) for o in head.occurrences] == [("1.0", [4]), ("1.1", [6])]
    assert "from a test, out of scope" not in sites


def test_reharvesting_a_version_is_idempotent(toy_data, tmp_path):
    before = (toy_data / "sites" / "toy.jsonl").read_text()
    harvest("toy", "1.1", str(tmp_path / "v2"), toy_data)
    assert (toy_data / "sites" / "toy.jsonl").read_text() == before
    assert sorted(store.read_manifest(toy_data)["toy"]) == ["1.0", "1.1"]


def test_drift_names_added_removed_moved_and_reworded(toy_data):
    report = drift(store.read_sites(toy_data, "toy"), "1.0", "1.1")
    assert [s.template for s in report.added] == ["softcap is not supported"]
    assert [s.template for s in report.removed] == ["sliding window is not supported"]
    assert [(a.path, b.path) for a, b in report.moved] == [("src/toy/old.py", "src/toy/new.py")]
    assert [(a.template, b.template) for a, b, _ in report.reworded] == [
        ("page_size {page_size} must be a multiple of 16", "page_size {page_size} must be a multiple of 16 on this GPU")]
    assert report.unchanged == 1


def test_drift_refuses_an_unharvested_version(toy_data):
    with pytest.raises(ValueError, match="2.0"):
        drift(store.read_sites(toy_data, "toy"), "1.0", "2.0")


def test_a_git_checkout_is_scoped_and_named_like_the_distribution(toy_data, tmp_path):
    """In the repository the package lives under src/ (path_map toy/ -> src/toy/): a git source
    must still find its files in scope and give the same sites as the distribution did."""
    import subprocess

    repo = write_tree(tmp_path / "repo", {f"src/{rel}": text for rel, text in V2.items()})
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "v1.2"], check=True)
    subprocess.run(git + ["tag", "v1.2"], check=True)
    harvest("toy", "1.2", f"git:{repo}@v1.2", toy_data)
    sites = {s.template: s for s in store.read_sites(toy_data, "toy")}
    assert [(o.version, o.lines) for o in sites["head_dim {head_dim} is too large"].occurrences][-1] == ("1.2", [6])
    assert "1.2" in sites["softcap is not supported"].versions
    assert "from a test, out of scope" not in sites


def test_a_message_moved_into_a_conditional_keeps_its_site(tmp_path):
    """flash-attn-4 4.0.0b39 raised `QK MXFP8 requires e4m3 Q/K and bf16 V` alone; 4.0.0b40 chose
    it or a new text with `A if pv else B` in one raise. The old site must go on, not vanish."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "packages.json").write_text(json.dumps({"toy": {
        "repo": "example/toy", "tag": "v{version}", "path_map": [], "include": ["toy/**"], "exclude": []}}))
    old = {"toy/mx.py": '''
        def check(q):
            raise ValueError("QK MXFP8 requires e4m3 Q/K and bf16 V")
    '''}
    new = {"toy/mx.py": '''
        def check(q, pv):
            raise ValueError("Native MXFP8 PV requires e4m3 Q/K/V" if pv
                             else "QK MXFP8 requires e4m3 Q/K and bf16 V")
    '''}
    harvest("toy", "1.0", str(write_tree(tmp_path / "v1", old)), data)
    harvest("toy", "1.1", str(write_tree(tmp_path / "v2", new)), data)
    sites = {s.template: s for s in store.read_sites(data, "toy")}
    kept = sites["QK MXFP8 requires e4m3 Q/K and bf16 V"]
    assert [(o.version, o.lines) for o in kept.occurrences] == [("1.0", [3]), ("1.1", [3])]
    assert [o.version for o in sites["Native MXFP8 PV requires e4m3 Q/K/V"].occurrences] == ["1.1"]
    report = drift(store.read_sites(data, "toy"), "1.0", "1.1")
    assert [s.template for s in report.added] == ["Native MXFP8 PV requires e4m3 Q/K/V"]
    assert report.removed == [] and report.unchanged == 1
