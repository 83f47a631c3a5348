"""A stub of the NVIDIA driver's libcuda.so.1 for one CUDA release, for loading extensions on a machine without a driver.

sgl-kernel's common_ops libraries list libcuda.so.1 as NEEDED, so on this machine (no NVIDIA driver) the
loader stops on the missing library before it binds a single symbol, and neither a torch mismatch nor a
missing driver function can show. NVIDIA's toolkits ship a stub libcuda.so for linking (lib64/stubs: the
driver API's functions, each returning CUDA_ERROR_STUB_LIBRARY); this machine's CUDA 13.0 toolkit has none
and no nvidia-* PyPI wheel ships one. So one is made here the same way, for a given CUDA release:

- the names come from that release's cuda.h, as shipped in the nvidia-cuda-runtime-cu12 wheel of the
  release (HEADERS): every `cuXxx(` the header declares, every name its #defines map (cuCtxCreate ->
  cuCtxCreate_v2) and the per-thread-stream variants of those (`__CUDA_API_PTDS(x)` -> x_ptds, PTSZ ->
  x_ptsz); comments are dropped first, so a function mentioned only in prose is not exported;
- each becomes a C function returning 34 (CUDA_ERROR_STUB_LIBRARY), compiled by gcc into a library whose
  SONAME is libcuda.so.1, in a folder of its own under the run's temporary root, put on LD_LIBRARY_PATH
  by the step.

A driver exports the functions of the driver API version it supports (what nvidia-smi prints as 'CUDA
Version'), and the header of release X declares the driver API of X, so the 12.3 stub stands for a
driver whose CUDA version is 12.3 and the 12.4 stub for one of 12.4. What the stub cannot stand for: any
call into it (torch then sees no device: 'Error 34: CUDA driver is a stub library'), and functions a real
driver exports beyond its header (internal ones no extension links). The steps that use it note which
release's stub they loaded.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from verification.cases import _builds as b
from verification.cases import _venv

HEADERS = {"12.3": "nvidia-cuda-runtime-cu12==12.3.101", "12.4": "nvidia-cuda-runtime-cu12==12.4.127",
           "12.8": "nvidia-cuda-runtime-cu12==12.8.90"}
STUB_LIBRARY = 34  # CUresult CUDA_ERROR_STUB_LIBRARY (cuda.h)

_DEFINE = re.compile(r"#define\s+(cu[A-Z]\w*)\s+(\S+)")
_PT = re.compile(r"__CUDA_API_PT(DS|SZ)\((cu[A-Z]\w*)\)")


def header(ctx, release: str) -> Path:
    """cuda.h of CUDA `release`, from the nvidia-cuda-runtime-cu12 wheel of that release (pip --target)."""
    env = _venv.venv(ctx, "fresh-" + b.PIP, pip=b.PIP)
    folder = b.pip_target(ctx, "target-" + HEADERS[release].replace("==", "-"), "--no-deps", HEADERS[release], env=env,
                          what=f"CUDA {release}'s cuda.h ({HEADERS[release]})")
    path = folder / "nvidia" / "cuda_runtime" / "include" / "cuda.h"
    version = re.search(r"#define\s+CUDA_VERSION\s+(\d+)", path.read_text())
    major, minor = release.split(".")
    if not version or version.group(1) != f"{major}{int(minor):02d}0":
        raise RuntimeError(f"{HEADERS[release]}'s cuda.h is not CUDA {release}: CUDA_VERSION {version and version.group(1)}")
    return path


def driver_api(ctx, release: str) -> set[str]:
    """The function names CUDA `release`'s cuda.h declares or maps to (see the module's docstring)."""
    text = header(ctx, release).read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    names = set(re.findall(r"\b(cu[A-Z]\w*)\s*\(", text))
    for name, target in _DEFINE.findall(text):
        names.add(name)
        pt = _PT.match(target)
        if pt:
            names.update({pt.group(2), f"{pt.group(2)}_pt{pt.group(1).lower()}"})
        elif re.fullmatch(r"cu[A-Z]\w*", target):
            names.add(target)
    return names


def libcuda(ctx, release: str) -> Path:
    """The folder holding CUDA `release`'s stub libcuda.so.1 (made once per run); for LD_LIBRARY_PATH."""
    folder = _venv._tmp_root() / f"libcuda-stub-{release}"
    lib = folder / "libcuda.so.1"
    names = sorted(driver_api(ctx, release))
    if not lib.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "stub.c").write_text("".join(f"int {n}(void) {{ return {STUB_LIBRARY}; }}\n" for n in names))
        cc = shutil.which("gcc") or shutil.which("cc")
        if cc is None:
            ctx.skip("needs a C compiler to build the stub libcuda.so.1")
        subprocess.run([cc, "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", str(lib), str(folder / "stub.c")],
                       check=True, capture_output=True, text=True, timeout=300)
    note = (f"stub libcuda.so.1 of CUDA {release}: the {len(names)} driver API names of {HEADERS[release]}'s cuda.h, "
            f"each returning CUDA_ERROR_STUB_LIBRARY (no NVIDIA driver on this machine; LD_LIBRARY_PATH={folder})")
    if note not in ctx.notes:
        ctx.note(note)
    return folder


def undefined(so: Path, pattern: str = r"cu[A-Z]\w*") -> list[str]:
    """The undefined dynamic symbols of `so` matching `pattern` (nm -D --undefined-only)."""
    out = subprocess.run(["nm", "-D", "--undefined-only", str(so)], capture_output=True, text=True, timeout=120).stdout
    return sorted({line.split()[-1] for line in out.splitlines() if re.fullmatch(pattern, line.split()[-1])})
