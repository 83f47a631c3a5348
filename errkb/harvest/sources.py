"""Read the text files of a released source: a wheel, an sdist, a folder or a git tag."""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

SOURCE_SUFFIXES = (".py", ".cpp", ".cc", ".cu", ".cuh", ".h", ".hpp")
MAX_FILE_BYTES = 4 * 1024 * 1024


def _wanted(name: str) -> bool:
    return name.endswith(SOURCE_SUFFIXES)


def _strip_sdist_root(names: list[str]) -> str:
    """sdists wrap everything in `name-version/`: return that prefix, or ''."""
    tops = {n.split("/", 1)[0] for n in names if "/" in n}
    return tops.pop() + "/" if len(tops) == 1 else ""


_TORCH_HEADER_GUARD = re.compile(
    r"\A#if !defined\(TORCH_STABLE_ONLY\) && !defined\(TORCH_TARGET_VERSION\)\n(.*)"
    r"#else\n#error [^\n]*\n#endif[^\n]*\n?\Z", re.S)


def _decode(data: bytes) -> str:
    """Text of a file, with packaging-only wrappers removed so line numbers match the repo."""
    text = data.decode("utf-8", errors="replace")
    # torch >= 2.10 wheels wrap every shipped header in a stable-ABI guard of 1 + 4 lines.
    return _TORCH_HEADER_GUARD.sub(r"\1", text) if text.startswith("#if !defined(TORCH_STABLE_ONLY)") else text


def iter_source(source: str) -> Iterator[tuple[str, str]]:
    """Yield (path inside the distribution, text) for every source file.

    `source` is a wheel/zip, an sdist (.tar.gz), a directory, or `git:REPO_DIR@REF`
    (a bare or normal git directory and a tag or commit).
    """
    if source.startswith("git:"):
        yield from _iter_git(source[4:])
    elif source.endswith((".whl", ".zip")):
        yield from _iter_zip(Path(source))
    elif source.endswith((".tar.gz", ".tgz", ".tar")):
        yield from _iter_tar(Path(source))
    elif Path(source).is_dir():
        yield from _iter_dir(Path(source))
    else:
        raise FileNotFoundError(f"not a wheel, sdist, directory or git:DIR@REF source: {source}")


def _iter_zip(path: Path) -> Iterator[tuple[str, str]]:
    with zipfile.ZipFile(path) as zf:
        infos = [i for i in zf.infolist() if _wanted(i.filename) and i.file_size <= MAX_FILE_BYTES]
        root = _strip_sdist_root([i.filename for i in infos]) if path.suffix == ".zip" else ""
        for info in infos:
            yield info.filename[len(root):], _decode(zf.read(info))


def _iter_tar(path: Path) -> Iterator[tuple[str, str]]:
    with tarfile.open(path) as tf:
        members = [m for m in tf.getmembers() if m.isfile() and _wanted(m.name) and m.size <= MAX_FILE_BYTES]
        root = _strip_sdist_root([m.name for m in members])
        for member in members:
            handle = tf.extractfile(member)
            if handle is not None:
                yield member.name[len(root):], _decode(handle.read())


def _iter_dir(root: Path) -> Iterator[tuple[str, str]]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and _wanted(path.name) and path.stat().st_size <= MAX_FILE_BYTES:
            yield path.relative_to(root).as_posix(), _decode(path.read_bytes())


def _iter_git(spec: str) -> Iterator[tuple[str, str]]:
    repo, _, ref = spec.rpartition("@")
    if not repo or not ref:
        raise ValueError(f"expected git:REPO_DIR@REF, got git:{spec}")
    archive = subprocess.run(
        ["git", "-C", repo, "archive", "--format=tar", ref], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tf:
        for member in tf.getmembers():
            if member.isfile() and _wanted(member.name) and member.size <= MAX_FILE_BYTES:
                handle = tf.extractfile(member)
                if handle is not None:
                    yield member.name, _decode(handle.read())
