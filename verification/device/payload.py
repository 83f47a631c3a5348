"""`make gpu-payload`: fetch, check and pack everything the lent H200 needs for `errkb verify`.

    python3 verification/device/payload.py [--cache .gpu-cache] [--out .gpu] [--offline]

1. Every file of verification/device/payload.lock.json is fetched with pip (`pip download
   --no-deps --require-hashes`, for the device's Python and platform) into the cache, unless it is
   there already, and every cached file's sha256 is checked against the lock.
2. Each payload's archive is built straight from its wheels (payload_pack.py), unless the one
   built before came from the same files, profile, preset and packing code.
3. The pieces are laid out as .gpu/call<N>/, each folder one device call's carry and under the
   lock's limit, each with manifest.json (sizes and sha256s) that payload_install.py checks there.

Run again with everything present, it only re-checks hashes. Standard library and pip only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import payload_pack as pack  # noqa: E402
import payload_plan  # noqa: E402

REPO = pack.HERE.parent.parent


def fetch(lock: pack.Lock, cache: Path, offline: bool = False) -> None:
    """Bring every locked file into the cache, fetched by pip with its hash required, then check
    them all; raise SystemExit naming what is missing or differs."""
    cache.mkdir(parents=True, exist_ok=True)
    missing = [f for f in lock.files if not _cached(cache, f)]
    if missing and offline:
        raise SystemExit("not in the cache (--offline): " + ", ".join(f.file for f in missing))
    # A requirements file names a package once, so versions of one package go in separate batches.
    batches: list[list[pack.LockedFile]] = []
    for f in missing:
        batch = next((b for b in batches if all(pack.normalize(g.package) != pack.normalize(f.package) for g in b)), None)
        if batch is None:
            batches.append(batch := [])
        batch.append(f)
    for batch in batches:
        _pip_download(lock.target, batch, cache)
    bad = [f for f in lock.files if not _cached(cache, f)]
    if bad:
        raise SystemExit("after pip, these files are missing or differ from the lock's sha256: "
                         + ", ".join(f.file for f in bad))


def _cached(cache: Path, f: pack.LockedFile) -> bool:
    path = cache / f.file
    return path.is_file() and pack.sha256_of(path) == f.sha256


def _pip_download(target: dict, files: list[pack.LockedFile], cache: Path) -> None:
    unknown = sorted({f.index for f in files} - {"pypi"})
    if unknown:
        raise SystemExit(f"unknown index {unknown}: payload.py fetches from pip's own index (pypi) only")
    requirements = cache / ".requirements.txt"
    requirements.write_text("".join(f"{f.package}=={f.version} --hash=sha256:{f.sha256}\n" for f in files))
    platforms = [arg for p in target["platforms"] for arg in ("--platform", p)]
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "--require-hashes",
           "--python-version", target["python"], "--implementation", target["implementation"],
           "--abi", target["abi"], *platforms, "--dest", str(cache), "--requirement", str(requirements)]
    print(f"pip download: {len(files)} file(s): " + " ".join(f"{f.package}=={f.version}" for f in files), flush=True)
    if subprocess.run(cmd).returncode != 0:
        raise SystemExit("pip download failed (see above); nothing was packed")


def build_archives(lock: pack.Lock, cache: Path, build: Path) -> dict[str, dict]:
    """Each payload's archive, rebuilt only when its recipe changed; {payload: name, size, sha256}."""
    code = pack.sha256_of(Path(pack.__file__)) + "".join(  # what shapes the archives
        pack.sha256_of(p) for p in sorted(pack.SHIMS.rglob("*.py")) if "__pycache__" not in p.parts)
    archives = {}
    for payload in lock.payloads:
        sources = [(f.file, f.sha256, f.uses[payload.name]) for f in lock.files_of(payload.name)
                   if f.uses[payload.name] != pack.WHEEL]
        if not sources:
            continue
        out = build / f"{payload.name}.tar.xz"
        state_path = build / f"{payload.name}.json"
        recipe = hashlib.sha256(json.dumps([sources, payload.xz, code]).encode()).hexdigest()
        state = json.loads(state_path.read_text()) if state_path.is_file() else {}
        if state.get("recipe") == recipe and out.is_file() and pack.sha256_of(out) == state.get("sha256"):
            print(f"{payload.name}: archive up to date ({state['size'] / pack.MIB:.1f} MiB)", flush=True)
        else:
            start = time.monotonic()
            tmp = out.with_suffix(".xz.tmp")
            count = pack.write_archive(pack.archive_members(lock, payload, cache), tmp, payload.xz)
            tmp.replace(out)
            state = {"recipe": recipe, "name": out.name, "size": out.stat().st_size,
                     "sha256": pack.sha256_of(out), "members": count}
            state_path.write_text(json.dumps(state, indent=1) + "\n")
            print(f"{payload.name}: packed {count} files, xz -{payload.xz}: {state['size'] / pack.MIB:.1f} MiB "
                  f"in {time.monotonic() - start:.0f} s", flush=True)
        archives[payload.name] = {"name": out.name, "size": state["size"], "sha256": state["sha256"]}
    return archives


def lay_out(lock: pack.Lock, cache: Path, out: Path, archives: dict[str, dict]) -> dict:
    build = out / "build"
    entries = []
    for payload in lock.payloads:
        archive = build / archives[payload.name]["name"] if payload.name in archives else None
        wheels = [cache / f.file for f in lock.files_of(payload.name) if f.uses[payload.name] == pack.WHEEL]
        entries.append((payload, archive, wheels))
    # The manifest itself rides in each call folder: keep room for it.
    plan = payload_plan.plan_calls(entries, int(lock.call_limit_mib * pack.MIB) - 64 * 1024)
    payload_plan.write_calls(plan, out, payload_plan.all_calls(lock))
    manifest = payload_plan.manifest(lock, plan, out, archives)
    payload_plan.write_manifests(manifest, out)
    return manifest


def report(manifest: dict, out: Path) -> None:
    sizes = Counter()
    for path in out.glob("call*/*"):
        sizes[path.parent.name] += path.stat().st_size
    for call in manifest["calls"]:
        payloads = sorted({p["name"] for p in manifest["payloads"] for piece in p["pieces"] if piece["call"] == call})
        print(f"  .gpu/call{call}: {sizes[f'call{call}'] / pack.MIB:5.1f} MiB  ({', '.join(payloads)})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=REPO / ".gpu-cache", help="downloaded wheels (default .gpu-cache)")
    parser.add_argument("--out", type=Path, default=REPO / ".gpu", help="packed payloads (default .gpu)")
    parser.add_argument("--lock", type=Path, default=pack.LOCK)
    parser.add_argument("--offline", action="store_true", help="never call pip: fail if a file is not cached")
    args = parser.parse_args(argv)
    start = time.monotonic()
    try:
        lock = pack.load_lock(args.lock)
    except pack.LockError as exc:
        raise SystemExit(f"{args.lock}: {exc}") from None
    fetch(lock, args.cache, args.offline)
    print(f"{len(lock.files)} locked files present, sha256 checked ({time.monotonic() - start:.0f} s)", flush=True)
    archives = build_archives(lock, args.cache, args.out / "build")
    try:
        manifest = lay_out(lock, args.cache, args.out, archives)
    except payload_plan.PlanError as exc:
        raise SystemExit(str(exc)) from None
    print(f"ready in {time.monotonic() - start:.0f} s; carry one folder per call:")
    report(manifest, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
