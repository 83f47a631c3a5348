"""An installed wheel carries the API, the linter and the whole dataset, nothing else on disk."""

import json
import os
import subprocess
import sys
import zipfile

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(out), str(REPO)], check=True)
    return next(out.glob("errkb-*.whl"))


def test_wheel_ships_subpackages_under_errkb(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "errkb/api/__init__.py" in names and "errkb/lint/__init__.py" in names
    assert not any(n.startswith(("api/", "lint/", "data/")) for n in names)
    assert "errkb/data/schema/record.schema.json" in names
    assert "errkb/data/sites/manifest.json" in names
    records = [n for n in names if n.startswith("errkb/data/records/") and n.endswith(".json")]
    assert len(records) == len(list((REPO / "data" / "records").glob("*/*.json")))
    # the compiled candidate selection and paste scans, built with the wheel (see test_candidates
    # and test_paste_compiled for why they matter)
    for module in ("_candidates", "_paste"):
        assert any(n.startswith(f"errkb/{module}.") and n.endswith((".so", ".pyd")) for n in names), names


def test_installed_wheel_serves_its_embedded_dataset(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True)
    env = {**os.environ, "PYTHONPATH": str(target)}
    proc = subprocess.run([sys.executable, "-m", "errkb.cli", "stats", "--format", "json"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    stats = json.loads(proc.stdout)
    assert stats["records"] == len(list((REPO / "data" / "records").glob("*/*.json")))
    probe = ("import errkb.api.app as a, errkb.store as s, errkb.candidates as c, errkb.paste as p, pathlib; "
             "a.create_app(); print(s.default_data_dir(), (pathlib.Path(a.__file__).parent / 'static' / 'app.js').exists(), "
             "c.compiled is not None, p.compiled is not None)")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(target / "errkb" / "data"), "True", "True", "True"]
    assert str(target) in subprocess.run(
        [sys.executable, "-c", "import errkb.store as s; print(s.default_data_dir())"],
        cwd=tmp_path, env=env, capture_output=True, text=True).stdout
