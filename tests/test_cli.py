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


def test_stats_text_names_each_run_environment_once_with_its_count():
    line = next(x for x in errkb("stats").stdout.splitlines() if x.startswith("verification:"))
    listed = line.split("run environments: ", 1)[1].split(", ")
    names = [item.rsplit(" ×", 1)[0] for item in listed]
    assert len(names) == len(set(names)) and all(item.rsplit(" ×", 1)[1].isdigit() for item in listed)


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


SPLITKV = "AssertionError: SplitKV not supported on SM 9.0"


def explain(*args, stdin=SPLITKV, data_dir=None):
    globals_ = ["--data-dir", str(data_dir)] if data_dir else []
    return subprocess.run([sys.executable, "-m", "errkb.cli", *globals_, "explain", *args, "-"], input=stdin,
                          capture_output=True, text=True)


def test_explain_prints_the_record_and_exits_1_on_no_match():
    proc = explain()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1].startswith("fa4-splitkv-sm90  [")
    assert "What it means:" in proc.stdout and "Fixes:" in proc.stdout
    none = explain(stdin="hello world, all is well")
    assert none.returncode == 1 and none.stdout.startswith("No known attention-backend error")
    bare = explain(stdin="RuntimeError: CUDA error: no kernel image is available for execution on the device")
    assert bare.returncode == 1 and "  - cuda-no-kernel-image: " in bare.stdout and "[needs: flash_attn," in bare.stdout
    assert json.loads(explain("--format", "json", stdin="no kernel image is available for execution")
                      .stdout)["withheld"][0]["id"] == "cuda-no-kernel-image"


def test_explain_prints_a_bare_site_with_the_releases_that_raise_it(dataset, index):
    entry = next(e for e in index.entries if not e.record_ids and "{" not in e.template
                 and len(e.literal) > 60 and "\n" not in e.template and not e.info_only
                 and not e.aside_warning)  # a warning about something else answers only through a record
    site = dataset.sites[next(iter(entry.first_site.values()))]
    proc = explain(stdin=f"RuntimeError: {entry.template}\n")
    assert proc.returncode == 0, proc.stderr
    assert "(no curated record yet)" in proc.stdout and site.path in proc.stdout
    assert site.occurrences[-1].version in proc.stdout


def test_explain_json_is_the_apis_answer(data_dir):
    from errkb.kb import KnowledgeBase

    answer = json.loads(explain("--format", "json").stdout)
    assert answer == json.loads(KnowledgeBase.load(data_dir).match_json(SPLITKV))


def test_show_prints_a_record_and_refuses_an_unknown_id():
    out = errkb("show", "fa4-splitkv-sm90", "--format", "json").stdout
    assert json.loads(out)["id"] == "fa4-splitkv-sm90"
    proc = errkb("show", "no-such-record", check=False)
    assert proc.returncode == 2 and "no-such-record" in proc.stderr


def test_a_reader_that_leaves_early_is_not_an_error():
    """`errkb show X | head -c 1`: the pipe closes while errkb writes; no traceback, exit 0."""
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", f"{sys.executable} -m errkb.cli show fa4-splitkv-sm90 | head -c 1"],
                          capture_output=True, text=True)
    assert (proc.returncode, proc.stdout) == (0, "f") and "Traceback" not in proc.stderr


def test_a_warm_explain_imports_no_pydantic():
    """The cached path answers from JSON: pydantic (and the 13,000 parsed sites) stay unloaded."""
    explain()  # warms the cache
    probe = ("import runpy, sys\nsys.argv = ['errkb', 'explain', 'SplitKV not supported on SM 9.0']\n"
             "try:\n    runpy.run_module('errkb.cli', run_name='__main__')\nexcept SystemExit:\n    pass\n"
             "print('pydantic' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.stdout.splitlines()[-1] == "False", proc.stderr


def test_the_cache_follows_the_data_and_survives_damage(data_copy, index_cache_dir):
    record = data_copy / "records" / "fa4" / "fa4-splitkv-sm90.json"
    body = json.loads(record.read_text())
    assert explain(data_dir=data_copy).stdout.splitlines()[2] == body["title"]
    body["title"] = "A title changed after the cache was written"
    record.write_text(json.dumps(body, indent=2))
    assert explain(data_dir=data_copy).stdout.splitlines()[2] == body["title"]
    for cached in index_cache_dir.glob("index-*.marshal"):
        cached.write_bytes(cached.read_bytes()[:1000])  # cut short, as by a full disk
    proc = explain(data_dir=data_copy)
    assert proc.returncode == 0 and proc.stdout.splitlines()[2] == body["title"]


def test_explain_without_the_compiled_selections_gives_the_same_answer():
    """ERRKB_PURE_PYTHON=1 (no C compiler at install): nothing is cached, the answer is the same."""
    import os

    env = {**os.environ, "ERRKB_PURE_PYTHON": "1"}
    pure = subprocess.run([sys.executable, "-m", "errkb.cli", "explain", "--format", "json", "-"], input=SPLITKV,
                          capture_output=True, text=True, env=env)
    assert json.loads(pure.stdout) == json.loads(explain("--format", "json").stdout), pure.stderr


def test_explain_takes_the_project_a_bare_line_comes_from():
    line = "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root."
    assert explain(stdin=line).returncode == 1
    named = explain("--project", "flash-attn", stdin=line)
    assert named.returncode == 0 and "the project given is flash-attn" in named.stdout
    assert named.stdout.splitlines()[1].startswith("flash-attn-build-cuda-home-not-set  [")
