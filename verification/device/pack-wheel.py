"""Pack the parts of a wheel that verification needs as one .tar.xz, for the lent GPU.

One device call may carry 64 MiB. Two profiles:

- `python`: everything but compiled extensions (SGLang's server code and the data files it looks
  up, such as its JIT sources; its extensions are built for another Python and are not what the
  cases exercise).
- `flashinfer`: flashinfer-python 0.7.4 unpacks to ~700 MB. Import needs every .py file (the
  package imports most of its modules eagerly); the JIT compiler needs the headers (include,
  cutlass, cccl, spdlog) and the sources at the top of data/csrc, where the attention, page and
  decode modules live. The model-specific kernel folders under data/csrc are left out: a case that
  reaches one fails to compile and is reported as an error, not a result.

    python3 verification/device/pack-wheel.py PROFILE WHEEL_OR_SDIST OUT.tar.xz

An sdist (.tar.gz, e.g. vLLM's) contributes the files under its package folder, top folder dropped.
"""

from __future__ import annotations

import io
import lzma
import sys
import tarfile
import zipfile
from pathlib import Path

HEADERS = ("flashinfer/data/include/", "flashinfer/data/cutlass/", "flashinfer/data/cccl/",
           "flashinfer/data/spdlog/")


def wanted(profile: str, name: str) -> bool:
    if name.endswith("/"):
        return False
    if name.endswith(".py") or ".dist-info/" in name:
        return True
    if profile == "flashinfer":
        return name.startswith(HEADERS) or (name.startswith("flashinfer/data/csrc/") and name.count("/") == 3)
    return not name.endswith((".so", ".pyd"))


def members(source: str):
    """(name inside the package tree, bytes) for every file of a wheel or an sdist."""
    if source.endswith(".tar.gz"):
        package = Path(source).name.rsplit("-", 1)[0].replace("-", "_") + "/"
        with tarfile.open(source) as sdist:
            for info in sdist:
                name = info.name.split("/", 1)[1] if "/" in info.name else ""
                if info.isfile() and name.startswith(package):
                    yield name, sdist.extractfile(info).read()
        return
    with zipfile.ZipFile(source) as z:
        for info in z.infolist():
            yield info.filename, z.read(info)


def main(profile: str, source: str, out: str) -> None:
    if profile not in ("python", "flashinfer"):
        raise SystemExit(f"unknown profile {profile!r}: python or flashinfer")
    with lzma.open(out, "wb", preset=6) as raw, tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in members(source):
            if wanted(profile, name):
                entry = tarfile.TarInfo(name)
                entry.size, entry.mode = len(data), 0o644
                tar.addfile(entry, io.BytesIO(data))


if __name__ == "__main__":
    main(*sys.argv[1:4])
