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

    python3 verification/device/pack-wheel.py PROFILE WHEEL OUT.tar.xz
"""

from __future__ import annotations

import io
import lzma
import sys
import tarfile
import zipfile

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


def main(profile: str, wheel: str, out: str) -> None:
    if profile not in ("python", "flashinfer"):
        raise SystemExit(f"unknown profile {profile!r}: python or flashinfer")
    with zipfile.ZipFile(wheel) as z, lzma.open(out, "wb", preset=6) as raw, tarfile.open(fileobj=raw, mode="w") as tar:
        for info in z.infolist():
            if wanted(profile, info.filename):
                data = z.read(info)
                entry = tarfile.TarInfo(info.filename)
                entry.size, entry.mode = len(data), 0o644
                tar.addfile(entry, io.BytesIO(data))


if __name__ == "__main__":
    main(*sys.argv[1:4])
