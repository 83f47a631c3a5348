"""Version boundaries (issue 17 item 4): the bisection over releases, on fake presence
functions, and data/versions/boundaries.json against the records it describes."""

import math

import pytest

from errkb import boundaries
from errkb.boundary_search import search
from errkb.versions import version_key

RELEASES = [f"1.{i}" for i in range(20)]


def fake(raising: set[int], unreadable: frozenset[int] = frozenset()):
    """A probe over RELEASES that counts its calls."""
    calls = []

    def probe(version: str):
        calls.append(version)
        i = RELEASES.index(version)
        return None if i in unreadable else i in raising
    return probe, calls


def test_bisect_finds_both_ends_and_reads_only_what_it_needs():
    probe, calls = fake(set(range(5, 15)))
    result = search(RELEASES, {"1.8": True, "1.12": True, "1.18": False}, probe)
    assert (result.first, result.first_status, result.before_first) == ("1.5", "found", "1.4")
    assert (result.last, result.last_status, result.after_last) == ("1.14", "found", "1.15")
    assert result.checked["1.4"] is False and result.checked["1.5"] is True  # the neighbours were read
    assert not {"1.8", "1.12", "1.18"} & set(calls)  # harvested answers are not read again
    assert len(calls) <= 2 * math.ceil(math.log2(len(RELEASES))) + 2
    assert result.gaps == []


def test_raised_by_the_oldest_release_is_only_bounded():
    probe, _ = fake(set(range(0, 10)))
    result = search(RELEASES, {"1.6": True}, probe)
    assert (result.first, result.first_status, result.before_first) == ("1.0", "bounded", None)
    assert (result.last, result.last_status) == ("1.9", "found")


def test_raised_by_the_newest_release():
    probe, _ = fake(set(range(3, 20)))
    result = search(RELEASES, {"1.10": True}, probe)
    assert (result.first, result.first_status) == ("1.3", "found")
    assert (result.last, result.last_status, result.after_last) == ("1.19", "newest", None)


def test_an_unreadable_neighbour_leaves_the_end_bounded():
    probe, _ = fake(set(range(5, 12)), unreadable=frozenset({4, 12}))
    result = search(RELEASES, {"1.8": True}, probe)
    assert (result.first, result.first_status, result.before_first) == ("1.5", "bounded", "1.4")
    assert (result.last, result.last_status, result.after_last) == ("1.11", "bounded", "1.12")


def test_a_checked_release_without_the_message_inside_the_range_is_reported():
    probe, _ = fake({3, 4, 5, 7, 8, 9})
    result = search(RELEASES, {"1.4": True, "1.6": False, "1.8": True}, probe)
    assert (result.first, result.last) == ("1.3", "1.9")
    assert result.gaps == ["1.6"]


def test_search_refuses_when_no_release_is_known_to_raise_it():
    with pytest.raises(ValueError):
        search(RELEASES, {"1.4": False}, fake(set())[0])


def test_summary_says_whether_the_first_release_was_found():
    table = {"packages": {"pkg": {"releases": 20, "oldest": "1.0", "newest": "1.19", "checked_on": "2026-12-02"}},
             "not_checked": {"other": "not released"},
             "records": {"r": {"pkg": {"first": "1.5", "first_status": "found", "before_first": "1.4",
                                       "last": "1.19", "last_status": "newest", "after_last": None, "gaps": [],
                                       "checked": {"1.4": False, "1.5": True, "1.19": True}}},
                         "s": {"pkg": {"first": "1.0", "first_status": "bounded", "before_first": None,
                                       "last": "1.9", "last_status": "found", "after_last": "1.10", "gaps": [],
                                       "checked": {"1.0": True, "1.9": True, "1.10": False}}},
                         "t": {"pkg": {"first": "1.5", "first_status": "bounded", "before_first": "1.4",
                                       "last": "1.9", "last_status": "bounded", "after_last": "1.10", "gaps": [],
                                       "checked": {"1.4": False, "1.5": True, "1.9": True, "1.10": False},
                                       "outside_scope": {"1.4": ["pkg/old_place.py"], "1.10": None}}}}}
    found = boundaries.release_range(table, "r", "pkg", ["1.8"])
    assert found.first_found and found.releases_checked == 3
    assert found.summary.startswith("raised from 1.5 (first release found; 1.4 does not raise it) to 1.19")
    bounded = boundaries.release_range(table, "s", "pkg", ["1.8"])
    assert not bounded.first_found and "≤ 1.0" in bounded.summary and "oldest" in bounded.summary
    assert "1.10 no longer raises it" in bounded.summary
    moved = boundaries.release_range(table, "t", "pkg", ["1.8"])
    assert not moved.first_found and "pkg/old_place.py" in moved.basis and moved.summary.startswith("raised in releases ≤ 1.5")
    assert "… at least 1.9" in moved.summary
    unchecked = boundaries.release_range(table, "r", "other", ["2.0", "2.1"])
    assert (unchecked.first, unchecked.first_found, unchecked.last_status) == ("2.0", False, "bounded")
    assert unchecked.basis == "not released"


def test_the_boundaries_file_covers_every_record_with_sites_and_agrees_with_the_harvest(dataset):
    table = dataset.boundaries
    assert table["records"], "data/versions/boundaries.json is missing or empty"
    for record_id in table["records"]:
        assert record_id in dataset.records_by_id, f"boundaries for a record that does not exist: {record_id}"
    for record in dataset.records:
        for affected in dataset.detail(record).affected:
            package, harvested = affected.package, affected.versions
            entry = table["records"].get(record.id, {}).get(package)
            if entry is None:
                assert package in table["not_checked"], f"{record.id}: {package} has no boundaries and no reason"
                continue
            key = version_key
            assert key(entry["first"]) <= key(harvested[0]) and key(harvested[-1]) <= key(entry["last"]), record.id
            checked = entry["checked"]
            assert checked[entry["first"]] is True and checked[entry["last"]] is True, record.id
            assert all(checked[v] is True for v in harvested if v in checked), record.id
            if entry["first_status"] == "found":
                assert checked[entry["before_first"]] is False, record.id
            if entry["last_status"] == "found":
                assert checked[entry["after_last"]] is False, record.id
            if entry["last_status"] == "newest":
                assert entry["last"] == table["packages"][package]["newest"] or \
                    key(entry["last"]) > key(table["packages"][package]["newest"]), record.id
            assert affected.releases.first == entry["first"]
