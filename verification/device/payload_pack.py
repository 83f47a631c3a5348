"""The lock, the packing and the call plan behind `make gpu-payload` (verification/device/payload.py).

The lent H200 has no registry access and each call carries at most 64 MiB of ignored paths, so
everything it needs is fetched here, checked against payload.lock.json and packed into
`.gpu/call<N>/` folders, one per device call, each under the lock's `call_limit_mib`. A payload is
what one site folder on the device needs: at most one .tar.xz archive, built straight from the
members of pinned wheels (never from another archive), plus wheels shipped unchanged. An archive
too big for one call is cut into byte ranges carried by consecutive calls;
verification/device/payload_install.py joins them on the device.

Only the standard library: this runs before any virtual environment exists.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import re
import shutil
import subprocess
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from payload_install import sha256_of  # noqa: F401 (one definition; the device side has only the standard library)

HERE = Path(__file__).resolve().parent
LOCK = HERE / "payload.lock.json"
SHIMS = HERE / "sglang-fa4-shims"
MIB = 1 << 20
SHA256 = re.compile(r"[0-9a-f]{64}")

# The wheel's name and version as its file name spells them (PEP 427: dashes become underscores).
_WHEEL_NAME = re.compile(r"(?P<name>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl")


class LockError(ValueError):
    """payload.lock.json says something inconsistent; the message says what and where."""


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


# --- member selection: which files of a wheel a payload's archive takes --------------------------

_CXX = (".h", ".hpp", ".cuh", ".inl", ".cu", ".cpp", ".cc", ".c")
_FLASHINFER_HEADERS = ("flashinfer/data/include/", "flashinfer/data/cutlass/", "flashinfer/data/cccl/",
                       "flashinfer/data/spdlog/")
_SGLANG_FA4 = ("sglang/version.py", "sglang/kernels/kernel_api_logging.py", "sglang/kernels/jit/cute_aot_cache.py",
               "sglang/kernels/ops/attention/fa4_sm120/", "sglang/kernels/ops/attention/flash_attention_v4.py",
               "sglang/kernels/ops/attention/flash_attn/")


def _compiled(name: str, head: bytes) -> bool:
    return name.endswith((".so", ".pyd")) or head.startswith(b"\x7fELF")


def _take_all(name: str, head: bytes) -> bool:
    return True


def _take_python(name: str, head: bytes) -> bool:
    """A project's Python tree with its data files: no compiled code (built for another torch)."""
    return not _compiled(name, head)


def _take_python_no_cxx(name: str, head: bytes) -> bool:
    """As `python`, also without the C++/CUDA sources and headers the wheel's build added for
    kernels compiled on demand (vLLM's third_party/): no case compiles them."""
    return _take_python(name, head) and not name.endswith(_CXX)


def _take_flashinfer(name: str, head: bytes) -> bool:
    """flashinfer-python 0.7.4 unpacks to ~700 MB. Import needs every .py file (the package imports
    most modules eagerly); its JIT compiler needs the headers and the sources at the top of
    data/csrc, where the attention, page and decode modules live. The model-specific kernel folders
    under data/csrc stay out: a case reaching one fails to compile, an error, never a verdict."""
    if name.endswith(".py") or ".dist-info/" in name:
        return True
    return name.startswith(_FLASHINFER_HEADERS) or (name.startswith("flashinfer/data/csrc/") and name.count("/") == 3)


def _take_sglang_fa4(name: str, head: bytes) -> bool:
    """SGLang's FA4 wrapper and its vendored kernels only (the shims stand in for the rest)."""
    return name.startswith(_SGLANG_FA4)


def _take_kernel_py(name: str, head: bytes) -> bool:
    """sgl_kernel's Python files (and 0.3.21's vendored flash_attn_origin/), no compiled module."""
    return name.endswith(".py") and name.startswith(("sgl_kernel/", "flash_attn_origin/"))


PROFILES: dict[str, Callable[[str, bytes], bool]] = {
    "all": _take_all,
    "python": _take_python,
    "python-no-cxx": _take_python_no_cxx,
    "flashinfer": _take_flashinfer,
    "sglang-fa4": _take_sglang_fa4,
    "kernel-py": _take_kernel_py,
}
WHEEL = "wheel"  # the file is shipped unchanged and unzipped on the device


# --- the lock -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LockedFile:
    package: str
    version: str
    file: str
    sha256: str
    index: str
    uses: dict[str, str]  # payload name -> "wheel" or a profile name


@dataclass(frozen=True)
class Payload:
    name: str
    site: str  # folder under the device's base (/root)
    calls: tuple[int, ...]  # the calls that may carry its pieces, in order
    xz: int  # xz preset of its archive
    about: str


@dataclass(frozen=True)
class Lock:
    target: dict
    call_limit_mib: float
    payloads: tuple[Payload, ...]
    files: tuple[LockedFile, ...]
    digest: str

    def files_of(self, payload: str) -> list[LockedFile]:
        return [f for f in self.files if payload in f.uses]


def load_lock(path: Path = LOCK) -> Lock:
    raw = path.read_bytes()
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise LockError(f"{path}: not JSON ({exc})") from None
    lock = parse_lock(data)
    return Lock(lock.target, lock.call_limit_mib, lock.payloads, lock.files, hashlib.sha256(raw).hexdigest())


def parse_lock(data: dict) -> Lock:
    """Build and check a Lock: every file pinned by name, version and sha256, used by payloads that
    exist, in ways that exist; every payload has files and calls."""
    if not isinstance(data, dict):
        raise LockError("the lock must be a JSON object")
    missing = {"target", "call_limit_mib", "payloads", "files"} - data.keys()
    if missing:
        raise LockError(f"the lock lacks {', '.join(sorted(missing))}")
    payloads = []
    for i, p in enumerate(data["payloads"]):
        where = f"payloads[{i}] ({p.get('name', '?')})"
        for key in ("name", "site", "calls", "xz"):
            if key not in p:
                raise LockError(f"{where}: no {key!r}")
        calls = p["calls"]
        if not calls or calls != sorted(set(calls)) or not all(isinstance(c, int) and c >= 1 for c in calls):
            raise LockError(f"{where}: calls must be increasing call numbers from 1, not {calls!r}")
        if not (isinstance(p["xz"], int) and 0 <= p["xz"] <= 9):
            raise LockError(f"{where}: xz must be a preset 0-9, not {p['xz']!r}")
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", p["site"]):
            raise LockError(f"{where}: site must be one folder name, not {p['site']!r}")
        payloads.append(Payload(p["name"], p["site"], tuple(calls), p["xz"], p.get("about", "")))
    names, sites = [p.name for p in payloads], [p.site for p in payloads]
    if len(set(names)) != len(names) or len(set(sites)) != len(sites):
        raise LockError(f"payload names or sites repeat (each payload has a site folder of its own): {names} {sites}")
    files, seen = [], set()
    for i, f in enumerate(data["files"]):
        where = f"files[{i}] ({f.get('file', '?')})"
        for key in ("package", "version", "file", "sha256", "index", "payloads"):
            if not f.get(key):
                raise LockError(f"{where}: no {key!r}")
        if not SHA256.fullmatch(f["sha256"]):
            raise LockError(f"{where}: sha256 must be 64 lowercase hex digits")
        match = _WHEEL_NAME.fullmatch(f["file"])
        if not match:
            raise LockError(f"{where}: not a wheel file name")
        if normalize(match["name"]) != normalize(f["package"]) or match["version"] != f["version"]:
            raise LockError(f"{where}: the file name says {match['name']} {match['version']}, "
                            f"the entry {f['package']} {f['version']}")
        if f["file"] in seen:
            raise LockError(f"{where}: listed twice")
        seen.add(f["file"])
        for payload, use in f["payloads"].items():
            if payload not in names:
                raise LockError(f"{where}: unknown payload {payload!r}")
            if use != WHEEL and use not in PROFILES:
                raise LockError(f"{where}: unknown use {use!r} (wheel or one of {', '.join(PROFILES)})")
        files.append(LockedFile(f["package"], f["version"], f["file"], f["sha256"], f["index"], dict(f["payloads"])))
    lock = Lock(data["target"], float(data["call_limit_mib"]), tuple(payloads), tuple(files), "")
    for p in payloads:
        if not lock.files_of(p.name):
            raise LockError(f"payload {p.name!r} has no files")
    return lock


# --- archives -------------------------------------------------------------------------------------

def archive_members(lock: Lock, payload: Payload, cache: Path) -> Iterator[tuple[str, bytes]]:
    """(path in the site folder, bytes) for every file of the payload's archive, in a fixed order."""
    for f in lock.files_of(payload.name):
        use = f.uses[payload.name]
        if use == WHEEL:
            continue
        take = PROFILES[use]
        prefix = f"{normalize(f.package)}-{f.version}/" if use == "kernel-py" else ""
        with zipfile.ZipFile(cache / f.file) as wheel:
            for info in sorted(wheel.infolist(), key=lambda i: i.filename):
                if info.is_dir():
                    continue
                with wheel.open(info) as member:
                    head = member.read(4)
                if take(info.filename, head):
                    yield prefix + info.filename, wheel.read(info)
        if use == "sglang-fa4":
            yield from sglang_fa4_shims(f.version)


def sglang_fa4_shims(version: str) -> Iterator[tuple[str, bytes]]:
    """errkb's own files that let SGLang's FA4 wrapper import without the rest of SGLang
    (sglang-fa4-shims/: stub package files and two shims, see their docstrings)."""
    for path in sorted(p for p in SHIMS.rglob("*.py") if "__pycache__" not in p.parts):
        yield path.relative_to(SHIMS).as_posix(), path.read_bytes()
    numbers = tuple(int(x) if x.isdigit() else x for x in version.split("."))
    yield "sglang/_version.py", f'__version__ = "{version}"\n__version_tuple__ = {numbers}\n'.encode()


def write_archive(members: Iterator[tuple[str, bytes]], out: Path, preset: int) -> int:
    """Write members as one .tar.xz with fixed metadata; xz runs on every core when the xz program
    is there (Python's lzma uses one). Returns the number of members; a name given twice is an
    error (two wheels of one payload would overwrite each other's file)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    xz = shutil.which("xz")
    seen: set[str] = set()
    with open(out, "wb") as sink:
        proc = subprocess.Popen([xz, f"-{preset}", "-T0", "-c"], stdin=subprocess.PIPE, stdout=sink) if xz else None
        stream = proc.stdin if proc else lzma.open(sink, "wb", preset=preset)
        try:
            with tarfile.open(fileobj=stream, mode="w|", format=tarfile.PAX_FORMAT) as tar:
                for name, data in members:
                    if name in seen:
                        raise ValueError(f"{out.name}: {name} comes twice")
                    seen.add(name)
                    entry = tarfile.TarInfo(name)
                    entry.size, entry.mode, entry.mtime = len(data), 0o644, 0
                    tar.addfile(entry, io.BytesIO(data))
        finally:
            stream.close()
            if proc and proc.wait() != 0:
                raise RuntimeError(f"xz failed ({proc.returncode}) writing {out}")
    return len(seen)
