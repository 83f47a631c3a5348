"""Target versions read from the project itself, for the configuration rules (EKB6xx-8xx) when no
target version is configured for a package.

Precedence, per package (vllm, sglang, transformers), first found wins:

1. `--target-version` / `[tool.errkb.versions]` (explicit: applies to every file);
2. the image of the container that runs the launch: `image:` of the same Kubernetes container or
   compose service (`vllm/vllm-openai:v0.8.5`, `lmsysorg/sglang:v0.4.6.post5-cu124`);
3. the file's own pins: image references (a Dockerfile's `FROM`, `docker run IMAGE`) and
   `pip install vllm==X` in a Dockerfile, script, YAML, Markdown file or notebook, when the file
   names one version of the package (several different ones: none); in a Markdown file, only
   inside fenced blocks (the caller blanks the prose: documents.markdown_code);
   a container or Dockerfile stage that runs another vLLM/SGLang image (`vllm/vllm-openai:latest`,
   `lmcache/vllm-openai:2025-05-05-v1`) has an unknown version: the project's pins do not apply;
4. the project's pins: an exact pin (`vllm==0.8.5`, `sglang[all]==0.4.6.post5`) in
   `requirements*.txt`, `pyproject.toml`, `setup.py`, `setup.cfg`, or the version in `uv.lock`,
   in the nearest folder above the file (up to the configuration root) whose files pin the
   package; a folder that pins it to several versions gives none (and the search stops there).

Ranges (`>=`, `~=`, `<`) are not versions and are ignored. Image tags without a version (`latest`,
`nightly`) say nothing. This module imports nothing heavy: the driver uses it to find the pin files.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

PACKAGES = ("vllm", "sglang", "transformers")
_NAMES = "vllm|sglang|transformers"
_VNUM = r"v?(\d+(?:\.\d+){1,3}(?:\.?post\d+)?)"
_VERSION = _VNUM + r"(?![\w.+])"
_PIN = re.compile(rf"(?<![\w.-])({_NAMES})(?:\[[^\]\n]*\])?[ \t]*===?[ \t]*{_VERSION}", re.I)
_LOCK = re.compile(rf'^name = "({_NAMES})"\r?\nversion = "{_VERSION}"', re.M)
_IMAGE = re.compile(rf"(?<![\w.-])(?:[\w.-]+(?::\d+)?/)*?(vllm/vllm-openai|lmsysorg/sglang):{_VNUM}(?=$|[-\s\"',\]}}])",
                    re.M)
_IMAGE_PACKAGE = {"vllm/vllm-openai": "vllm", "lmsysorg/sglang": "sglang"}
PIN_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "uv.lock")

Versions = dict  # package -> (version, where it was read)


def is_pin_file(name: str) -> bool:
    return name in PIN_FILES or (name.startswith("requirements") and name.endswith(".txt"))


def _add(found: dict[str, set], package: str, version: str, origin: str, origins: dict) -> None:
    found.setdefault(package.lower(), set()).add(version)
    origins.setdefault((package.lower(), version), origin)


def _one_each(found: dict[str, set], origins: dict) -> Versions:
    return {p: (next(iter(v)), origins[(p, next(iter(v)))]) for p, v in found.items() if len(v) == 1}


def image_versions(text: str) -> Versions:
    """Versions named by image references in `text` (one each; several different: none)."""
    found, origins = {}, {}
    for m in _IMAGE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        _add(found, _IMAGE_PACKAGE[m.group(1)], m.group(2), f"image {m.group(0)} at line {line}", origins)
    return _one_each(found, origins)


def file_versions(text: str) -> Versions:
    """The versions a launch file names for itself: image references and `==` pins, one each."""
    found, origins = {}, {}
    for m in _IMAGE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        _add(found, _IMAGE_PACKAGE[m.group(1)], m.group(2), f"image {m.group(0)} at line {line}", origins)
    for m in _PIN.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        _add(found, m.group(1), m.group(2), f"{m.group(0).strip()} at line {line}", origins)
    return _one_each(found, origins)


def container_versions(image: str, where: str) -> Versions:
    """What the image a container (or a Dockerfile's last stage) runs says about each package: the
    version of a vLLM/SGLang release image with a version tag; an unknown version (None) for every
    package when it is another vLLM/SGLang image (`vllm/vllm-openai:latest`, `lmcache/vllm-openai:...`),
    so the project's pins do not stand in for it; nothing for other images."""
    origin = f"image {image} at {where}"
    got = {p: (v, origin) for p, (v, _) in image_versions(image).items()}
    name, _, tag = image.rpartition(":")
    name = image if not name or "/" in tag else name
    if "vllm" in name.lower() or "sglang" in name.lower():
        return {**{p: (None, origin) for p in PACKAGES}, **got}
    return got


_FROM = re.compile(r"^[ \t]*FROM[ \t]+(?:--\S+[ \t]+)*(\S+)", re.I | re.M)


def dockerfile_base(text: str) -> Versions:
    """container_versions of the image a Dockerfile's last stage starts from."""
    froms = list(_FROM.finditer(text))
    if not froms:
        return {}
    m = froms[-1]
    return container_versions(m.group(1), f"line {text.count(chr(10), 0, m.start()) + 1}")


@lru_cache(maxsize=256)
def _pins_in(path: str, mtime_ns: int) -> tuple[tuple[str, str], ...]:
    """(package, version) pairs one pin file names (cached per file and modification time)."""
    try:
        with open(path, "rb") as fh:
            text = fh.read(2_000_000).decode("utf-8", "replace")
    except OSError:
        return ()
    pattern = _LOCK if path.endswith("uv.lock") else _PIN
    return tuple((m.group(1).lower(), m.group(2)) for m in pattern.finditer(text))


def folder_pins(folder: str, names: list[str]) -> dict[str, set[tuple[str, str]]]:
    """package -> {(version, file)} pinned by the pin files `names` of one folder."""
    out: dict[str, set[tuple[str, str]]] = {}
    for name in names:
        path = os.path.join(folder, name)
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            continue
        for package, version in _pins_in(path, mtime):
            out.setdefault(package, set()).add((version, name))
    return out


def pin_files_of(folder: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(folder) if is_pin_file(n))
    except OSError:
        return []


def project_versions(path: str, root: str, known: dict[str, list[str]] | None = None) -> Versions:
    """The project's pins for the file `path`: per package, the nearest folder from the file's own
    up to `root` (or only the file's folder when it is not under root) that pins it. `known` maps
    folders to their pin files when the caller has listed them already (the tree walk)."""
    folder = os.path.dirname(os.path.abspath(path))
    root = os.path.abspath(root)
    out: Versions = {}
    settled: set[str] = set()
    while True:
        names = known.get(folder) if known is not None and folder in known else pin_files_of(folder)
        for package, pins in folder_pins(folder, names).items():
            if package in settled:
                continue
            settled.add(package)
            versions = {v for v, _ in pins}
            if len(versions) == 1:
                version, name = sorted(pins)[0]
                rel = os.path.relpath(os.path.join(folder, name), root) if folder.startswith(root) else name
                out[package] = (version, f"{package}=={version} in {rel}")
        parent = os.path.dirname(folder)
        if folder == root or not folder.startswith(root + os.sep) or parent == folder:
            return out
        folder = parent


def wanted(codes, explicit: dict) -> bool:
    """Whether pins matter for a run: a configuration rule is selected and some package has no
    configured target version."""
    return any(c.startswith(("EKB6", "EKB7", "EKB8")) for c in codes) and not all(p in explicit for p in PACKAGES)


def complete(pin_dirs: dict[str, list[str]], files, root) -> str:
    """List the pin files of the folders between each linted file and the root that the tree walk
    did not see (files named one by one, a sub-folder linted alone), then return a digest of every
    pin file's path, size and modification time: it goes into the cache manifest's key, so a changed
    pin re-checks the files it decides."""
    import hashlib

    root = os.path.abspath(root)
    for folder in {os.path.dirname(os.path.abspath(f[0] if isinstance(f, tuple) else f)) for f in files}:
        while folder not in pin_dirs:
            pin_dirs[folder] = pin_files_of(folder)
            parent = os.path.dirname(folder)
            if folder == root or not folder.startswith(root + os.sep) or parent == folder:
                break
            folder = parent
    h = hashlib.sha256()
    for folder in sorted(d for d, names in pin_dirs.items() if names):
        for name in pin_dirs[folder]:
            try:
                st = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            h.update(f"{folder}/{name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


__all__ = ["PACKAGES", "complete", "container_versions", "dockerfile_base", "file_versions", "image_versions", "is_pin_file", "pin_files_of",
           "project_versions", "wanted"]
