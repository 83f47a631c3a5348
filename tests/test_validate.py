"""Validation refuses each kind of bad data; the shipped dataset passes."""

import json
import shutil

import pytest

from errkb import store, validate as validate_mod
from errkb.harvest.fingerprints import line_hash, normalise
from errkb.validate import validate

EXAMPLE = "sglang-fa4-kvcache-batch-idx-leftpad"


def test_shipped_dataset_is_valid(data_dir):
    report = validate(data_dir)
    assert report.errors == []
    assert report.records >= 1 and report.sites > 0


def _example_path(data):
    return next(data.glob(f"records/*/{EXAMPLE}.json"))


def _edit(data, change):
    path = _example_path(data)
    raw = json.loads(path.read_text())
    change(raw)
    path.write_text(json.dumps(raw))


def _errors(data):
    return "\n".join(validate(data).errors)


def test_message_must_match_its_template(data_copy):
    _edit(data_copy, lambda r: r.update(message="something else entirely"))
    assert "does not match its own template" in _errors(data_copy)


def test_message_must_match_a_linked_site(data_copy):
    _edit(data_copy, lambda r: r.update(message="Totally different text.", template="Totally different text."))
    assert "matches none of its linked sites" in _errors(data_copy)


def test_linked_sites_and_related_ids_must_exist(data_copy):
    _edit(data_copy, lambda r: r.update(sites=r["sites"] + ["sglang:000000000000"], related=["no-such-record"]))
    errors = _errors(data_copy)
    assert "linked site sglang:000000000000 does not exist" in errors
    assert "related id 'no-such-record' does not exist" in errors


def test_schema_errors_are_reported(data_copy):
    _edit(data_copy, lambda r: r.update(gpu_archs=["sm999"]))
    assert "schema: gpu_archs/0" in _errors(data_copy)


def test_duplicate_ids_are_refused(data_copy):
    path = _example_path(data_copy)
    copy = data_copy / "records" / "other" / path.name
    copy.parent.mkdir()
    shutil.copy(path, copy)
    assert f"duplicate record id '{EXAMPLE}'" in _errors(data_copy)


def test_ids_never_disappear(data_copy):
    _example_path(data_copy).unlink()
    assert f"id '{EXAMPLE}' was issued" in _errors(data_copy)


def test_new_ids_must_be_registered(data_copy):
    ids = data_copy / "ids.txt"
    ids.write_text(ids.read_text().replace(EXAMPLE + "\n", ""))
    assert f"id '{EXAMPLE}' is not registered" in _errors(data_copy)


def test_file_name_must_be_the_id(data_copy):
    path = _example_path(data_copy)
    path.rename(path.with_name("renamed.json"))
    assert "file name does not match id" in _errors(data_copy)


UPSTREAM = ["    if cache_batch_idx is not None or cache_leftpad is not None:",
            "        raise NotImplementedError(\"no batch indices here, sorry\")"]


def _fingerprint(data, lines):
    (data / "sites" / "zz-test.fp").write_text("".join(line_hash(normalise(l)) + "\n" for l in lines))


def test_copied_upstream_block_is_refused(data_copy):
    _fingerprint(data_copy, UPSTREAM)
    _edit(data_copy, lambda raw: raw["fixes"][0].update(before="out = f(q)\n" + "\n".join(UPSTREAM)))
    assert "carries upstream source code in fixes[0].before" in _errors(data_copy)


def test_one_short_common_line_is_not_a_copy(data_copy):
    idiom = "major, _ = torch.cuda.get_device_capability()"
    _fingerprint(data_copy, [idiom])
    _edit(data_copy, lambda raw: raw["fixes"][0].update(before=idiom + "\nout = f(q)"))
    assert "carries upstream source code" not in _errors(data_copy)


def test_patterns_without_a_linear_time_certificate_are_refused(data_copy, monkeypatch):
    from errkb import redos

    def refuse(template):
        raise redos.NotLinear("an unbounded repeat that can backtrack")

    monkeypatch.setattr(redos, "template_step_bound", refuse)
    assert "search pattern has no linear-time certificate: an unbounded repeat that can backtrack" in _errors(data_copy)


def test_unparsable_record_is_reported_not_fatal(data_copy):
    _example_path(data_copy).write_text("{not json")
    assert "not JSON" in _errors(data_copy)


def test_a_site_only_older_versions_have_is_history_unless_the_newest_has_none(data_copy):
    from errkb.dataset import Dataset

    ds = Dataset.load(data_copy)
    record, old = next((r, d.sites_missing_in_newest) for r in ds.records
                       if (d := ds.detail(r)).sites_missing_in_newest
                       and len({ds.sites[s].package for s in r.sites}) == 1 and len(r.sites) > len(d.sites_missing_in_newest))
    assert not any(w.startswith(f"{record.id}:") for w in validate(data_copy).warnings)
    path = next(data_copy.glob(f"records/*/{record.id}.json"))
    raw = json.loads(path.read_text())
    raw["sites"] = old
    path.write_text(json.dumps(raw))
    assert any(w.startswith(f"{record.id}:") and "gone from" in w for w in validate(data_copy).warnings)


def test_a_record_without_sites_must_say_where_its_text_comes_from(data_copy):
    _edit(data_copy, lambda r: r.update(sites=[], origin=None))
    assert f"{EXAMPLE}: links no harvested site and names no origin" in _errors(data_copy)
    _edit(data_copy, lambda r: r.update(origin="the CUDA runtime's error string"))
    assert "names no origin" not in _errors(data_copy)
