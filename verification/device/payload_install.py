"""Runs ON the lent GPU: check this call's payload, then unpack what it completes.

    python3 verification/device/payload_install.py CALL [--gpu .gpu] [--base /root] [--check]

`make gpu-payload` (payload.py) laid out .gpu/call<CALL>/ with manifest.json. First every piece
this call carries is checked (present, full size, sha256): anything missing or damaged stops the
call here with a message naming it and how to fix it, before anything is unpacked. Pieces of an
archive that a later call completes are kept in BASE/errkb-stash (the machine keeps /root between
back-to-back calls while it is warm); each payload whose last piece rides in this call is then
joined, checked as a whole and unpacked into BASE/<site> (archive with tarfile, wheels with
zipfile). A payload already installed from the same pieces is left as it is. Exit status 3 on any
failure, so run.sh stops.

Standard library only (the device has Python 3.12 and no registry).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

MIB = 1 << 20
HOW_TO_FIX = "prepare it with `make gpu-payload` and carry ['.gpu/call{call}'] in this call"


class PayloadError(Exception):
    """The payload this call needs is not there or not whole; the message says which file."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(MIB), b""):
            digest.update(block)
    return digest.hexdigest()


def load_manifest(gpu: Path, call: int) -> dict:
    path = gpu / f"call{call}" / "manifest.json"
    if not path.is_file():
        raise PayloadError(f"payload for call {call} missing: no {path}; " + HOW_TO_FIX.format(call=call))
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise PayloadError(f"{path} is unreadable ({exc}); " + HOW_TO_FIX.format(call=call)) from None


def check_piece(path: Path, piece: dict, payload: str, fix: str) -> None:
    """Raise PayloadError unless path holds exactly the piece the manifest describes."""
    what = f"{path} (payload {payload!r}, call {piece['call']})"
    if not path.is_file():
        raise PayloadError(f"missing: {what}; {fix}")
    size = path.stat().st_size
    if size != piece["size"]:
        raise PayloadError(f"truncated or damaged: {what} has {size} bytes, the manifest says {piece['size']}; {fix}")
    if sha256_of(path) != piece["sha256"]:
        raise PayloadError(f"damaged: {what} does not match its sha256 in the manifest; {fix}")


def check_call(manifest: dict, gpu: Path, call: int) -> list[tuple[dict, dict]]:
    """Every (payload, piece) this call carries, each checked."""
    if call not in manifest["calls"]:
        raise PayloadError(f"the plan has calls {manifest['calls']}, not {call}")
    here = [(p, piece) for p in manifest["payloads"] for piece in p["pieces"] if piece["call"] == call]
    for payload, piece in here:
        check_piece(gpu / piece["path"], piece, payload["name"], HOW_TO_FIX.format(call=call))
    return here


class _Joined:
    """The parts of a cut archive read as one stream, for tarfile's streaming mode."""

    def __init__(self, paths: list[Path]):
        self._paths, self._file = list(paths), None

    def read(self, n: int = -1) -> bytes:
        while self._paths or self._file:
            if self._file is None:
                self._file = open(self._paths.pop(0), "rb")
            data = self._file.read(n)
            if data:
                return data
            self._file.close()
            self._file = None
        return b""


def locate(piece: dict, payload: str, call: int, gpu: Path, stash: Path) -> Path:
    """Where a piece is now: in this call's carry, or stashed by the earlier call that carried it."""
    if piece["call"] == call:
        return gpu / piece["path"]
    path = stash / piece["path"]
    check_piece(path, piece, payload, f"run call {piece['call']} first, on the same warm machine "
                                      f"(carry ['.gpu/call{piece['call']}'])")
    return path


def install(payload: dict, call: int, gpu: Path, base: Path, stash: Path) -> str:
    site = base / payload["site"]
    marker = site / f".errkb-payload-{payload['name']}"
    stamp = json.dumps(sorted(piece["sha256"] for piece in payload["pieces"]))
    if marker.is_file() and marker.read_text() == stamp:
        return f"{payload['name']}: already installed in {site}"
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", payload["site"]):
        raise PayloadError(f"the manifest's site {payload['site']!r} is not one folder name")
    if site.exists():  # what an earlier, different or unfinished install left
        shutil.rmtree(site)
    site.mkdir(parents=True)
    parts = [locate(p, payload["name"], call, gpu, stash) for p in payload["pieces"] if p["kind"] == "part"]
    if parts:
        whole = payload["archive"]
        digest = hashlib.sha256()
        for part in parts:
            with open(part, "rb") as f:
                for block in iter(lambda: f.read(MIB), b""):
                    digest.update(block)
        if digest.hexdigest() != whole["sha256"]:
            raise PayloadError(f"{whole['name']} joined from {[str(p) for p in parts]} does not match its sha256: "
                               "the parts come from different `make gpu-payload` runs; carry one run's folders")
        try:
            with tarfile.open(fileobj=_Joined(parts), mode="r|xz") as tar:
                tar.extractall(site, filter="data")
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise PayloadError(f"unpacking {whole['name']} into {site} failed: {exc}") from None
    for piece in payload["pieces"]:
        if piece["kind"] == "wheel":
            wheel = locate(piece, payload["name"], call, gpu, stash)
            try:
                with zipfile.ZipFile(wheel) as z:
                    z.extractall(site)
            except (zipfile.BadZipFile, OSError) as exc:
                raise PayloadError(f"unpacking {wheel} into {site} failed: {exc}") from None
    marker.write_text(stamp)
    return f"{payload['name']}: installed in {site}"


def check_installed(manifest: dict, base: Path, need: list[str]) -> None:
    """Raise PayloadError unless every needed payload is installed from this manifest's pieces."""
    known = {p["name"]: p for p in manifest["payloads"]}
    for name in need:
        if name not in known:
            raise PayloadError(f"unknown payload {name!r} (the manifest has {', '.join(known)})")
        payload = known[name]
        marker = base / payload["site"] / f".errkb-payload-{name}"
        stamp = json.dumps(sorted(piece["sha256"] for piece in payload["pieces"]))
        if not (marker.is_file() and marker.read_text() == stamp):
            calls = sorted({piece["call"] for piece in payload["pieces"]})
            raise PayloadError(f"payload {name!r} is not installed in {base / payload['site']}: it is carried by "
                               f"call(s) {calls}, which must run first on the same warm machine")


def run(call: int, gpu: Path, base: Path, check_only: bool = False, need: list[str] = ()) -> list[str]:
    """Check this call's pieces; unless check_only, stash the early ones, install what completes
    and make sure every payload in `need` is installed."""
    manifest = load_manifest(gpu, call)
    here = check_call(manifest, gpu, call)
    if check_only:
        return [f"call {call}: {len(here)} pieces present and whole"]
    stash = base / "errkb-stash"
    done = []
    for payload in manifest["payloads"]:
        early = [piece for p, piece in here if p is payload and payload["install_call"] > call]
        for piece in early:
            dest = stash / piece["path"]
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(gpu / piece["path"], dest)
        if early:
            done.append(f"{payload['name']}: kept {len(early)} piece(s) for call {payload['install_call']}")
    for payload in manifest["payloads"]:
        if payload["install_call"] == call:
            done.append(install(payload, call, gpu, base, stash))
    # What earlier calls kept and no later install needs (a wheel may serve two payloads) goes.
    later = {piece["path"] for p in manifest["payloads"] if p["install_call"] > call for piece in p["pieces"]}
    for payload in manifest["payloads"]:
        for piece in payload["pieces"]:
            if payload["install_call"] <= call and piece["path"] not in later:
                (stash / piece["path"]).unlink(missing_ok=True)
    check_installed(manifest, base, list(need))
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="check and unpack one device call's payload")
    parser.add_argument("call", type=int)
    parser.add_argument("--gpu", type=Path, default=Path(".gpu"), help="the carried folders' parent (default .gpu)")
    parser.add_argument("--base", type=Path, default=Path("/root"), help="where the site folders go (default /root)")
    parser.add_argument("--check", action="store_true", help="only check this call's pieces")
    parser.add_argument("--need", default="", help="payloads that must be installed after this call, comma-separated")
    args = parser.parse_args(argv)
    try:
        lines = run(args.call, args.gpu, args.base, args.check, [n for n in args.need.split(",") if n])
    except PayloadError as exc:
        print(f"payload_install: call {args.call}: {exc}", file=sys.stderr)
        return 3
    print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
