"""Facts about the shipped dataset that the project promises (issue: dataset v1)."""

from errkb.stats import compute_stats

SEEDS = {"000_5b215da398c6ede8", "002_3afce3481f28c394", "004_f88a4b80c320c6f9"}


def test_scale_of_the_dataset(dataset):
    stats = compute_stats(ds=dataset)
    assert stats["records"] >= 150
    assert stats["templates"] >= 4000
    well_covered = [p for p, v in stats["packages"].items() if len(v["versions"]) >= 3]
    assert len(well_covered) >= 5, well_covered


def test_every_seed_is_checked_and_corrected(dataset):
    by_seed = {r.provenance.seed: r for r in dataset.records if r.provenance.seed}
    assert SEEDS <= set(by_seed)
    for seed in SEEDS:
        assert by_seed[seed].provenance.corrections, f"seed {seed} kept without saying what it got wrong"


def test_no_fix_recommends_the_invented_sglang_variable(dataset):
    for record in dataset.records:
        for fix in record.fixes:
            assert "SGLANG_FLASHATTENTION_VERSION" not in (fix.after or ""), record.id


def test_derived_locations_and_versions(dataset):
    record = dataset.records_by_id["sglang-fa4-kvcache-batch-idx-leftpad"]
    detail = dataset.detail(record)
    assert "sglang" in detail.packages
    sglang = next(a for a in detail.affected if a.package == "sglang")
    assert sglang.last_seen == dataset.newest_version("sglang") and sglang.removed_in is None
    loc = next(l for l in detail.raised_at if l.package == "sglang")
    assert loc.url == f"https://github.com/sgl-project/sglang/blob/v{loc.version}/{loc.path}#L{loc.line}"


def test_release_without_a_tag_has_no_guessed_url(dataset):
    record = dataset.records_by_id["fa4-splitkv-sm90"]
    loc = next(l for l in dataset.detail(record).raised_at if l.package == "flash-attn-4")
    assert loc.ref is None and loc.url is None and loc.version == "4.0.0b36"


def test_verified_records_carry_their_environment(dataset):
    confirmed = [r for r in dataset.records if r.verification.status == "confirmed"]
    assert confirmed
    for record in confirmed:
        runs = dataset.detail(record).verified_in
        assert runs and all(run.gpu and run.cases for run in runs), record.id
        assert any(case.endswith(":reproduce") and status == "confirmed"
                   for run in runs for case, status in run.cases.items()), record.id
