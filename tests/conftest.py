"""Shared fixtures: the shipped dataset, and throw-away copies of it to break on purpose."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from errkb import store
from errkb.dataset import Dataset

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session", autouse=True)
def index_cache_dir(tmp_path_factory) -> Path:
    """The CLI's on-disk index cache (errkb.index_cache) in a folder of the test run, for this
    process and the `errkb` processes the tests start, never in the user's home."""
    path = tmp_path_factory.mktemp("errkb-cache")
    os.environ["ERRKB_CACHE_DIR"] = str(path)
    return path


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return store.default_data_dir()


@pytest.fixture(scope="session")
def dataset(data_dir: Path) -> Dataset:
    return Dataset.load(data_dir)


@pytest.fixture(scope="session")
def index(dataset: Dataset):
    """The shipped dataset's match index, built once per test process (tests only read it)."""
    from errkb.match import MatchIndex

    return MatchIndex(dataset)


@pytest.fixture
def data_copy(tmp_path: Path, data_dir: Path) -> Path:
    """A private copy of the dataset that a test may change."""
    dest = tmp_path / "data"
    shutil.copytree(data_dir, dest, ignore=shutil.ignore_patterns("__pycache__", "__init__.py"))
    return dest
