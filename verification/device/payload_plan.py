"""The call plan behind `make gpu-payload`: which device call carries which piece of which payload.

Each call's folder, .gpu/call<N>/, must stay under the lock's `call_limit_mib` (a call carries
64 MiB with the working tree). The plan places pieces in lock order; manifest() records every
piece with its size and sha256, which verification/device/payload_install.py checks on the device.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from payload_pack import MIB, Lock, Payload, sha256_of


@dataclass
class Piece:
    payload: str
    kind: str  # "part" (a byte range of the payload's archive) or "wheel"
    name: str  # file name in the call folder
    call: int
    size: int
    source: Path
    offset: int = 0


@dataclass
class Plan:
    limit: int
    pieces: list[Piece] = field(default_factory=list)

    def used(self, call: int) -> int:
        return sum(p.size for p in self.pieces if p.call == call)

    def calls(self) -> list[int]:
        return sorted({p.call for p in self.pieces})


def all_calls(lock: Lock) -> list[int]:
    """Every call of the plan, 1 to the last any payload names: each gets a folder and a manifest,
    even one that happens to carry nothing, so each call's carry list never changes."""
    return list(range(1, max(c for p in lock.payloads for c in p.calls) + 1))


class PlanError(ValueError):
    """The payloads do not fit the calls the lock gives them."""


def plan_calls(payloads: list[tuple[Payload, Path | None, list[Path]]], limit: int) -> Plan:
    """Place each payload's archive and wheels, in lock order, into the first of its calls with
    room. An archive that no call has room for is cut, filling its calls in order (the CuTe DSL's
    193 MB MLIR library alone is over a call). Wheels are never cut; a wheel in several payloads of
    one call is carried once. Raise PlanError when something does not fit."""
    plan = Plan(limit)
    for payload, archive, wheels in payloads:
        calls = list(payload.calls)
        if archive is not None:
            size = archive.stat().st_size
            whole = [c for c in calls if plan.used(c) + size <= limit]
            if whole:
                calls = calls[calls.index(whole[0]):]
                plan.pieces.append(Piece(payload.name, "part", archive.name, whole[0], size, archive))
            else:
                offset = 0
                while offset < size:
                    while len(calls) > 1 and plan.used(calls[0]) >= limit:
                        calls.pop(0)
                    room = limit - plan.used(calls[0])
                    take = min(room, size - offset) if len(calls) > 1 else size - offset
                    if take > room:
                        raise PlanError(_overflow(plan, payload, archive.name, size))
                    plan.pieces.append(Piece(payload.name, "part", archive.name, calls[0], take, archive, offset))
                    offset += take
            _name_parts(plan, payload.name)
        for wheel in wheels:
            size = wheel.stat().st_size
            same = [p for p in plan.pieces if p.kind == "wheel" and p.name == wheel.name and p.call in calls]
            if same:
                plan.pieces.append(Piece(payload.name, "wheel", wheel.name, same[0].call, 0, wheel))
                continue
            fits = [c for c in calls if plan.used(c) + size <= limit]
            if not fits:
                raise PlanError(_overflow(plan, payload, wheel.name, size))
            plan.pieces.append(Piece(payload.name, "wheel", wheel.name, fits[0], size, wheel))
    return plan


def _name_parts(plan: Plan, payload: str) -> None:
    """An archive carried whole keeps its name; one cut in n parts is name.1 ... name.n."""
    parts = [p for p in plan.pieces if p.payload == payload and p.kind == "part"]
    if len(parts) == 1:
        parts[0].name = parts[0].source.name
    else:
        for i, p in enumerate(parts, 1):
            p.name = f"{p.source.name}.{i}"


def _overflow(plan: Plan, payload: Payload, what: str, size: int) -> str:
    load = ", ".join(f"call {c}: {plan.used(c) / MIB:.1f} MiB" for c in plan.calls())
    return (f"payload {payload.name!r}: {what} ({size / MIB:.1f} MiB) does not fit in calls "
            f"{list(payload.calls)} under {plan.limit / MIB:.0f} MiB each ({load}); "
            "give it another call in payload.lock.json")


def write_calls(plan: Plan, out: Path, calls: list[int]) -> None:
    """Lay the plan out as out/call<N>/, one folder for each of `calls` (all_calls), even one that
    carries nothing. Pieces of size 0 are wheels another payload of the same call already brought."""
    for old in out.glob("call*"):
        shutil.rmtree(old)
    for call in calls:
        (out / f"call{call}").mkdir(parents=True)
    for piece in plan.pieces:
        dest = out / f"call{piece.call}" / piece.name
        if dest.exists():
            continue
        with open(piece.source, "rb") as src, open(dest, "wb") as sink:
            src.seek(piece.offset)
            left = piece.size if piece.kind == "part" else None
            while left is None or left > 0:
                block = src.read(MIB if left is None else min(MIB, left))
                if not block:
                    break
                sink.write(block)
                if left is not None:
                    left -= len(block)


def write_manifests(manifest: dict, out: Path) -> None:
    """The same manifest in every call folder: each call checks its pieces and knows the others."""
    text = json.dumps(manifest, indent=1) + "\n"
    for call in manifest["calls"]:
        (out / f"call{call}" / "manifest.json").write_text(text)


def manifest(lock: Lock, plan: Plan, out: Path, archives: dict[str, dict]) -> dict:
    """What the device checks before unpacking: every piece with its call, size and sha256, and
    each payload's whole archive digest (checked after joining its parts)."""
    sums: dict[Path, str] = {}
    payloads = []
    for payload in lock.payloads:
        pieces = [p for p in plan.pieces if p.payload == payload.name]
        entries = []
        for p in pieces:
            path = out / f"call{p.call}" / p.name
            if path not in sums:
                sums[path] = sha256_of(path)
            entries.append({"kind": p.kind, "path": f"call{p.call}/{p.name}", "call": p.call,
                            "size": path.stat().st_size, "sha256": sums[path]})
        payloads.append({"name": payload.name, "site": payload.site,
                         "install_call": max(p.call for p in pieces),
                         "archive": archives.get(payload.name), "pieces": entries})
    return {"lock_sha256": lock.digest, "call_limit_mib": lock.call_limit_mib,
            "calls": all_calls(lock), "payloads": payloads}
