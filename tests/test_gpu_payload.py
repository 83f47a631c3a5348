"""The GPU payload recipe on the CPU, with no network: the lock's consistency, packing and the call
plan on tiny wheels made here, and the device-side check refusing a missing or truncated piece
with a message that names it (verification/device/payload*.py)."""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DEVICE = REPO / "verification" / "device"
sys.path.insert(0, str(DEVICE))
import payload_install  # noqa: E402
import payload_pack as pack  # noqa: E402
import payload_plan  # noqa: E402


# --- the committed lock ---------------------------------------------------------------------------

def test_the_lock_pins_every_file_and_every_payload_has_a_place():
    lock = pack.load_lock()
    assert lock.files and all(pack.SHA256.fullmatch(f.sha256) for f in lock.files)
    assert {p.name for p in lock.payloads} == {name for f in lock.files for name in f.uses}
    # the pins the results were measured with (docs/verification.md), quack and dlpack included
    pins = {pack.normalize(f.package): f.version for f in lock.files}
    assert pins["flash_attn_4"] == "4.0.0b36" and pins["nvidia_cutlass_dsl_libs_cu13"] == "4.8.1"
    assert pins["quack_kernels"] == "0.6.5" and pins["torch_c_dlpack_ext"] == "0.1.5"
    assert pins["vllm"] == "0.33.0" and pins["sglang"] == "0.5.23" and pins["flashinfer_python"] == "0.7.4"


def test_run_sh_follows_the_lock_s_call_plan():
    lock = pack.load_lock()
    run_sh = (DEVICE / "run.sh").read_text()
    for call in payload_plan.all_calls(lock):
        assert f"(carry .gpu/call{call}" in run_sh, f"run.sh's header does not say what call {call} carries"
    needed = {n for group in re.findall(r"install_payload \d+ (\S+)", run_sh) for n in group.split(",")}
    assert needed and needed <= {p.name for p in lock.payloads}


def test_the_xformers_abi_wheels_are_pinned_and_installed_by_the_kernel_call():
    lock = pack.load_lock()
    pins = {pack.normalize(f.package): f for f in lock.files_of("xformers-abi")}
    assert {k: f.version for k, f in pins.items()} == {"xformers": "0.0.28.post3", "nvidia_cuda_runtime_cu12": "12.1.105"}
    assert all(f.uses == {"xformers-abi": "wheel"} for f in pins.values())
    sys.path.insert(0, str(REPO / "verification" / "cases"))
    import _xformers_wheels  # the file names the cases unpack from .gpu/xf when not run by run.sh

    assert {f.file for f in pins.values()} == set(_xformers_wheels.WHEELS.values())
    payload = next(p for p in lock.payloads if p.name == "xformers-abi")
    run_sh = (DEVICE / "run.sh").read_text()
    # its cases are sdpa cases, run by the kernel call (4): installed there, and the cases told where
    assert max(payload.calls) == 4 and re.search(r"install_payload 4 \S*xformers-abi", run_sh)
    assert f"export ERRKB_XFORMERS_SITE=/root/{payload.site} " in run_sh


def test_the_xformers_cases_use_the_installed_site_when_run_sh_names_it(tmp_path, monkeypatch):
    sys.path.insert(0, str(REPO / "verification" / "cases"))
    import _xformers_wheels

    class Skip(Exception):
        pass

    class Ctx:
        def skip(self, reason):
            raise Skip(reason)

    monkeypatch.setenv("ERRKB_XFORMERS_SITE", str(tmp_path))
    (tmp_path / "xformers").mkdir()
    (tmp_path / "xformers" / "__init__.py").write_text("")
    assert _xformers_wheels.unpacked(Ctx(), "old") == tmp_path
    with pytest.raises(Skip, match="nvidia/cuda_runtime/lib is not here"):
        _xformers_wheels.unpacked(Ctx(), "cudart12")
    (tmp_path / "nvidia" / "cuda_runtime" / "lib").mkdir(parents=True)
    assert _xformers_wheels.unpacked(Ctx(), "cudart12") == tmp_path


def _real_plan(tmp_path):
    """The call plan of the committed lock over files of the sizes `make gpu-payload` measured
    (tests/data/gpu_payload_sizes.json; refresh it from .gpu/call1/manifest.json and the cache when a pin moves)."""
    lock = pack.load_lock()
    sizes = json.loads((REPO / "tests" / "data" / "gpu_payload_sizes.json").read_text())
    shipped = {f.file for f in lock.files if pack.WHEEL in f.uses.values()}
    assert set(sizes["wheels"]) == shipped, "a pin moved: refresh tests/data/gpu_payload_sizes.json"
    assert set(sizes["archives"]) == {f_use for f in lock.files for f_use, use in f.uses.items() if use != pack.WHEEL}

    def sized(name: str, size: int) -> Path:
        path = tmp_path / name
        with open(path, "wb") as f:
            f.truncate(size)  # sparse: only the size matters to the plan
        return path

    entries = []
    for payload in lock.payloads:
        archive = sized(f"{payload.name}.tar.xz", sizes["archives"][payload.name]) if payload.name in sizes["archives"] else None
        wheels = [sized(f.file, sizes["wheels"][f.file]) for f in lock.files_of(payload.name) if f.uses[payload.name] == pack.WHEEL]
        entries.append((payload, archive, wheels))
    limit = int(lock.call_limit_mib * pack.MIB) - 64 * 1024
    plan = payload_plan.plan_calls(entries, limit)
    return lock, limit, plan


def test_the_real_lock_s_plan_keeps_each_call_under_its_limit(tmp_path):
    """Every call folder under the limit, every payload installed by its last call."""
    lock, limit, plan = _real_plan(tmp_path)
    assert all(plan.used(c) <= limit for c in payload_plan.all_calls(lock))
    for payload in lock.payloads:
        assert {p.call for p in plan.pieces if p.payload == payload.name} <= set(payload.calls)
    # call 4 runs the sdpa cases that need xFormers's ABI pair, and installs what it completes first
    assert max(p.call for p in plan.pieces if p.payload == "xformers-abi") <= 4


def _lock_data() -> dict:
    return json.loads(pack.LOCK.read_text())


@pytest.mark.parametrize("break_it, message", [
    (lambda d: d["files"][0].update(version="9.9.9"), "the file name says"),
    (lambda d: d["files"][0].update(sha256="abc"), "sha256 must be 64"),
    (lambda d: d["files"][0].pop("sha256"), "no 'sha256'"),
    (lambda d: d["files"][0].update(payloads={"nowhere": "wheel"}), "unknown payload"),
    (lambda d: d["files"][0].update(payloads={"fa4": "zip-it"}), "unknown use"),
    (lambda d: d["files"].append(dict(d["files"][0])), "listed twice"),
    (lambda d: d["payloads"][0].update(calls=[2, 1]), "increasing call numbers"),
    (lambda d: d["payloads"][0].update(site="../root"), "one folder name"),
])
def test_an_inconsistent_lock_is_refused_with_the_reason(break_it, message):
    data = copy.deepcopy(_lock_data())
    break_it(data)
    with pytest.raises(pack.LockError, match=message):
        pack.parse_lock(data)


# --- packing and installing tiny wheels -----------------------------------------------------------

def _wheel(folder: Path, name: str, version: str, members: dict[str, bytes]) -> Path:
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for member, data in members.items():
            z.writestr(member, data)
    return path


@pytest.fixture
def tiny(tmp_path: Path):
    """A lock of two payloads over three tiny wheels, laid out with a limit that cuts one archive."""
    cache = tmp_path / "cache"
    cache.mkdir()
    noise = hashlib.sha256(b"x").digest() * 3000  # ~94 KB that xz cannot shrink much
    lib = _wheel(cache, "tinylib", "1.0", {
        "tinylib/__init__.py": b"VALUE = 1\n", "tinylib/_ext.so": b"\x7fELF compiled",
        "tinylib/tool": b"\x7fELF an executable", "tinylib/kernel.h": b"// header\n",
        "tinylib/blob.bin": bytes(b ^ i % 251 for i, b in enumerate(noise))})
    dep = _wheel(cache, "tinydep", "2.0", {"tinydep.py": b"X = 2\n"})
    other = _wheel(cache, "tinyother", "3.0", {"tinyother/__init__.py": b"Y = 3\n"})
    files = []
    for path, package, version, uses in ((lib, "tinylib", "1.0", {"one": "python"}),
                                         (dep, "tinydep", "2.0", {"one": "wheel", "two": "wheel"}),
                                         (other, "tinyother", "3.0", {"two": "python-no-cxx"})):
        files.append({"package": package, "version": version, "file": path.name, "sha256": pack.sha256_of(path),
                      "index": "pypi", "payloads": uses})
    lock = pack.parse_lock({"target": {}, "call_limit_mib": 1, "files": files, "payloads": [
        {"name": "one", "site": "onesite", "calls": [1, 2], "xz": 0},
        {"name": "two", "site": "twosite", "calls": [2, 3], "xz": 0}]})
    out = tmp_path / "gpu"
    archives, entries = {}, []
    for payload in lock.payloads:
        archive = out / "build" / f"{payload.name}.tar.xz"
        pack.write_archive(pack.archive_members(lock, payload, cache), archive, payload.xz)
        archives[payload.name] = {"name": archive.name, "size": archive.stat().st_size,
                                  "sha256": pack.sha256_of(archive)}
        wheels = [cache / f.file for f in lock.files_of(payload.name) if f.uses[payload.name] == "wheel"]
        entries.append((payload, archive, wheels))
    # a limit just under the first archive's size, so it must be cut across calls 1 and 2
    limit = archives["one"]["size"] - 1000
    plan = payload_plan.plan_calls(entries, limit)
    payload_plan.write_calls(plan, out, payload_plan.all_calls(lock))
    manifest = payload_plan.manifest(lock, plan, out, archives)
    payload_plan.write_manifests(manifest, out)
    return out, tmp_path / "root", manifest


def test_profiles_keep_python_and_data_and_drop_compiled_code(tiny):
    out, _, _ = tiny
    with tarfile.open(out / "build" / "one.tar.xz") as tar:
        assert sorted(tar.getnames()) == ["tinylib/__init__.py", "tinylib/blob.bin", "tinylib/kernel.h"]
        assert all(m.mtime == 0 and m.mode == 0o644 for m in tar.getmembers())
    with tarfile.open(out / "build" / "two.tar.xz") as tar:
        assert tar.getnames() == ["tinyother/__init__.py"]
    with pytest.raises(ValueError, match="a/b.py comes twice"):
        pack.write_archive(iter([("a/b.py", b"1"), ("a/b.py", b"2")]), out / "twice.tar.xz", 0)


def test_the_plan_cuts_only_what_no_call_can_hold_and_carries_a_shared_wheel_once(tiny):
    out, _, manifest = tiny
    pieces = {p["name"]: [(x["kind"], x["path"]) for x in p["pieces"]] for p in manifest["payloads"]}
    assert pieces["one"][:2] == [("part", "call1/one.tar.xz.1"), ("part", "call2/one.tar.xz.2")]
    wheel = "tinydep-2.0-py3-none-any.whl"
    assert ("wheel", f"call2/{wheel}") in pieces["one"] and ("wheel", f"call2/{wheel}") in pieces["two"]
    assert manifest["calls"] == [1, 2, 3] and [f.name for f in (out / "call3").iterdir()] == ["manifest.json"]
    limit = manifest["payloads"][0]["pieces"][0]["size"] + 1000
    for call in (1, 2):
        assert sum(f.stat().st_size for f in (out / f"call{call}").iterdir() if f.name != "manifest.json") <= limit


def test_the_device_side_joins_the_parts_and_installs_each_site(tiny):
    out, root, _ = tiny
    assert payload_install.run(1, out, root) == ["one: kept 1 piece(s) for call 2"]
    lines = payload_install.run(2, out, root, need=["one", "two"])
    assert lines == [f"one: installed in {root / 'onesite'}", f"two: installed in {root / 'twosite'}"]
    blob = zipfile.ZipFile(next((out.parent / "cache").glob("tinylib-*.whl"))).read("tinylib/blob.bin")
    assert (root / "onesite" / "tinylib" / "blob.bin").read_bytes() == blob
    assert (root / "onesite" / "tinydep.py").read_text() == "X = 2\n"
    assert (root / "twosite" / "tinyother" / "__init__.py").read_text() == "Y = 3\n"
    assert not any((root / "errkb-stash").rglob("*.1"))  # joined and installed: the kept part is gone
    assert payload_install.run(2, out, root)[0] == f"one: already installed in {root / 'onesite'}"


def test_a_missing_or_truncated_piece_stops_the_call_naming_it(tiny, capsys):
    out, root, _ = tiny
    part = out / "call2" / "one.tar.xz.2"
    part.write_bytes(part.read_bytes()[:-10])
    assert payload_install.main(["2", "--gpu", str(out), "--base", str(root)]) == 3
    err = capsys.readouterr().err
    assert "truncated or damaged" in err and "call2/one.tar.xz.2" in err and "make gpu-payload" in err
    part.unlink()
    with pytest.raises(payload_install.PayloadError, match=r"missing: .*call2/one\.tar\.xz\.2 \(payload 'one', call 2\)"):
        payload_install.run(2, out, root)
    assert not (root / "onesite").exists()  # nothing unpacked before the check


def test_a_call_out_of_order_or_without_its_folder_says_what_to_do(tiny):
    out, root, _ = tiny
    with pytest.raises(payload_install.PayloadError, match=r"run call 1 first, on the same warm machine"):
        payload_install.run(2, out, root)  # call 1 never ran here: its part was not kept
    with pytest.raises(payload_install.PayloadError, match=r"no .*call3/manifest\.json.*carry \['\.gpu/call3'\]"):
        payload_install.run(3, out.parent / "elsewhere", root)
    payload_install.run(1, out, root)
    with pytest.raises(payload_install.PayloadError, match="'two' is not installed"):
        payload_install.run(1, out, root, need=["two"])


def test_a_call_folder_and_the_tracked_tree_fit_in_one_device_call(tmp_path):
    """A device call carries the tracked tree and its call folder under 64 MiB, the host call (the
    last) also FA2's and FA3's builds. The tree grows with every session (pastes, sites, results):
    when this fails, lower call_limit_mib in verification/device/payload.lock.json, add a call
    where the plan asks for one, and re-run `make gpu-payload`."""
    import subprocess

    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    tree = sum((REPO / name).stat().st_size for name in files.decode().split("\0") if name and (REPO / name).is_file())
    flash_attn_builds = 8 * pack.MIB  # .gpu/fa (4.7 MiB) and .gpu/fa3 (2.5 MiB)
    lock, _, plan = _real_plan(tmp_path)
    calls = payload_plan.all_calls(lock)
    for call in calls:
        carried = tree + plan.used(call) + (flash_attn_builds if call == max(calls) else 0)
        assert carried <= 64 * pack.MIB, f"call {call} would carry {carried / pack.MIB:.1f} MiB (tree {tree / pack.MIB:.1f} MiB)"
