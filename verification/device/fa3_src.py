"""Runs HERE (not on the GPU): pack the pinned sources of the reduced FlashAttention-3 build into one
archive the H200 can take, `.gpu/fa3-src/fa3-src-2.8.3.tar.xz` (~1.1 MB):

    python3 verification/device/fa3_src.py --flash-attention GITDIR --cutlass GITDIR

FA3 is not in flash-attn's sdist (it has hopper/'s Python files only), and the sdist's cutlass copy
lacks the `.inl` headers hopper/ includes (`gemm/` and `epilogue/collective/builders/sm90_common.inl`),
so the sources come from git: flash-attention's `hopper/` and README.md (setup.py reads it) at tag
v2.8.3, and `include/` of NVIDIA/cutlass at the commit v2.8.3's `csrc/cutlass` submodule pins. Each
GITDIR is any clone (bare or not, shallow is fine) holding that commit. The commits and the git ids
of the trees taken are pinned below and checked before anything is written; the archive is written
with fixed metadata, so it is the same bytes wherever it is made, and its sha256 is pinned too
(fa3-build.sh checks it on the device). Standard library and git only.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import lzma
import subprocess
import sys
import tarfile
from pathlib import Path

FA_TAG = "v2.8.3"
FA_COMMIT = "060c9188beec3a8b62b33a3bfa6d5d2d44975fab"
FA_PATHS = {"hopper": "e91bc631b19afb09830041064020e50257822e14", "README.md": "dd7f1c1646ae76a543e3d72e6ce93d0e1451fde8"}
CUTLASS_COMMIT = "dc4817921edda44a549197ff3a9dcf5df0636e7b"  # FA_COMMIT's csrc/cutlass (cutlass v4.0.0)
CUTLASS_PATHS = {"include": "77bd42c7e2983047774e18fe0e918ab8bfdab7b6"}
TOP = "flash-attention-2.8.3"
ARCHIVE = Path(".gpu/fa3-src/fa3-src-2.8.3.tar.xz")
ARCHIVE_SHA256 = "d1dc464756945f47c2f07a5b1eb331b9ca3eee6b1d8475c9186dc063780c24ca"


class SourceError(Exception):
    """A git directory lacks the pinned commit, or holds other content under its name."""


def git(repo: Path, *args: str, binary: bool = False):
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True)
    if done.returncode != 0:
        raise SourceError(f"git -C {repo} {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout if binary else done.stdout.decode().strip()


def check_pins(fa: Path, cutlass: Path) -> None:
    """The commits exist and the trees taken from them are the pinned ones (git's own content ids)."""
    for repo, commit, paths in ((fa, FA_COMMIT, FA_PATHS), (cutlass, CUTLASS_COMMIT, CUTLASS_PATHS)):
        for path, want in paths.items():
            got = git(repo, "rev-parse", f"{commit}:{path}")
            if got != want:
                raise SourceError(f"{repo}: {commit[:12]}:{path} is {got}, pinned {want}")
    gitlink = git(fa, "ls-tree", FA_COMMIT, "csrc/cutlass").split()
    if gitlink[:3] != ["160000", "commit", CUTLASS_COMMIT]:
        raise SourceError(f"{fa}: {FA_TAG}'s csrc/cutlass points at {gitlink}, not {CUTLASS_COMMIT}")


def members(repo: Path, commit: str, paths: list[str], prefix: str) -> dict[str, tuple[int, bytes]]:
    """path under the archive -> (mode, content) for every file of `paths` at `commit`."""
    stream = io.BytesIO(git(repo, "archive", "--format=tar", commit, *paths, binary=True))
    out = {}
    with tarfile.open(fileobj=stream) as tar:
        for info in tar:
            if info.isdir():
                continue
            if not info.isfile():
                raise SourceError(f"{repo}: {info.name} at {commit[:12]} is not a plain file")
            out[f"{prefix}{info.name}"] = (0o755 if info.mode & 0o111 else 0o644, tar.extractfile(info).read())
    return out


def archive_bytes(files: dict[str, tuple[int, bytes]], mtime: int) -> bytes:
    """A tar.xz of `files` whose bytes depend on the files alone (sorted, fixed owner and times)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name in sorted(files):
            mode, data = files[name]
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), mode, mtime
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return lzma.compress(raw.getvalue(), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=6)


def pack(fa: Path, cutlass: Path) -> bytes:
    check_pins(fa, cutlass)
    files = members(fa, FA_COMMIT, sorted(FA_PATHS), f"{TOP}/")
    files |= members(cutlass, CUTLASS_COMMIT, sorted(CUTLASS_PATHS), f"{TOP}/csrc/cutlass/")
    return archive_bytes(files, int(git(fa, "log", "-1", "--format=%ct", FA_COMMIT)))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--flash-attention", type=Path, required=True, help="a git clone of Dao-AILab/flash-attention")
    parser.add_argument("--cutlass", type=Path, required=True, help="a git clone of NVIDIA/cutlass")
    parser.add_argument("--out", type=Path, default=ARCHIVE)
    args = parser.parse_args(argv)
    try:
        data = pack(args.flash_attention, args.cutlass)
    except SourceError as exc:
        print(f"fa3_src.py: {exc}", file=sys.stderr)
        return 3
    digest = hashlib.sha256(data).hexdigest()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    print(f"{args.out}: {len(data)} bytes, sha256 {digest}")
    if digest != ARCHIVE_SHA256:
        print(f"fa3_src.py: the archive's sha256 is not the pinned {ARCHIVE_SHA256} although its sources "
              "are; this machine's tar or xz writer differs (fa3-build.sh will refuse the archive)", file=sys.stderr)
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
