"""Pack the parts of a flashinfer-python wheel that attention kernels need, for the lent GPU.

The 0.7.4 wheel unpacks to ~700 MB, far over what one device call may carry (64 MiB). Import
needs every .py file (the package imports most of its modules eagerly); the JIT compiler needs
the headers (include, cutlass, cccl, spdlog) and the sources at the top of data/csrc, where the
attention, page and decode modules live. The many model-specific kernel folders under data/csrc
are left out: a case that reaches one fails to compile and is reported as an error, not a result.

    python3 verification/device/pack-flashinfer.py WHEEL OUT.tar.xz
"""

from __future__ import annotations

import io
import lzma
import sys
import tarfile
import zipfile

HEADERS = ("flashinfer/data/include/", "flashinfer/data/cutlass/", "flashinfer/data/cccl/",
           "flashinfer/data/spdlog/")


def wanted(name: str) -> bool:
    if name.endswith("/"):
        return False
    if name.endswith(".py") or ".dist-info/" in name or name.startswith(HEADERS):
        return True
    return name.startswith("flashinfer/data/csrc/") and name.count("/") == 3


def main(wheel: str, out: str) -> None:
    with zipfile.ZipFile(wheel) as z, lzma.open(out, "wb", preset=6) as raw, tarfile.open(fileobj=raw, mode="w") as tar:
        for info in z.infolist():
            if wanted(info.filename):
                data = z.read(info)
                entry = tarfile.TarInfo(info.filename)
                entry.size, entry.mode = len(data), 0o644
                tar.addfile(entry, io.BytesIO(data))


if __name__ == "__main__":
    main(*sys.argv[1:3])
