"""A CUDA extension whose .so holds damaged GPU code: the code is for this GPU, the driver refuses
to load it, and torch's launch check raises "CUDA error: device kernel image is invalid".

The record's second condition ("the .so file holding the GPU code is damaged"), made for real: a
one-kernel torch extension (an elementwise scale) is built with torch's JIT extension builder for
this GPU's architecture only (TORCH_CUDA_ARCH_LIST=<major>.<minor>, so its fatbinary holds one
cubin, no PTX), then a copy of the .so is written in which the second half of that cubin is
zeroed, as a copy cut short and padded would be. The fatbinary's entry still says "ELF for
sm_XY", so the CUDA runtime hands that cubin to the driver, which refuses it. The damaged copy is
imported from its own folder (under the same module name) and launched; the undamaged build is
what fix 3 (a clean reinstall) gives back, and it must run and match.

Which damage the driver notices was measured (verification/device/probes/cubin_damage.py, H100,
driver 580.159.04, torch 2.11.0+cu130): overwriting the cubin's section or program header tables
changes nothing (the launch runs and is right), a zeroed second half, zeroed `.nv.info`
sections, a wrong ELF magic, e_machine or e_flags give "device kernel image is invalid", code
bytes overwritten give "an illegal instruction was encountered", and an e_shoff out of range
crashes the process.

The first condition (a build made with a newer toolkit or fatbinary format than the driver
loads) needs an older driver than the GPU machine has: not reproduced. Needs nvcc and ninja."""

import hashlib
import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from verification.cases._common import TOL
from verification.cases._scale_kernel import SOURCE, build

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "packages": ["torch", "ninja"]}
TIMEOUT = 600

NAME = "errkb_kimage_scale"
FATBIN_MAGIC = 0xBA55ED50
ELF_KIND = 2  # a fatbinary entry holding a cubin (1 is PTX)

ROOT = Path(__file__).resolve().parents[3]
_CHILD_BUILD = "import sys; from verification.cases._scale_kernel import build; build(*sys.argv[1:4])"
_built: dict = {}


def _build(ctx) -> Path:
    """The path of the extension's .so, built for this GPU only, in a child process: a worker that
    has loaded the clean build runs the damaged copy's launches without error (the first H100 run,
    2026-12-08, refuted the step so; the probe launches each damaged copy in a process that never
    loads the clean build). The build folder is named after the source and the architecture, so a
    fresh worker finds ninja's build up to date instead of compiling again."""
    if "so" not in _built:
        major, minor = ctx.torch.cuda.get_device_capability()
        key = hashlib.sha256(f"{SOURCE}{major}.{minor}{ctx.torch.__version__}".encode()).hexdigest()[:12]
        folder = Path(tempfile.gettempdir()) / f"errkb-kimage-{key}"
        folder.mkdir(exist_ok=True)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        subprocess.run([sys.executable, "-c", _CHILD_BUILD, NAME, f"{major}.{minor}", str(folder)],
                       cwd=ROOT, env=env, check=True, capture_output=True, text=True)
        _built["so"] = next(folder.glob(f"{NAME}*.so"))
        ctx.note(f"built {NAME} with TORCH_CUDA_ARCH_LIST={major}.{minor} in a child process: {_built['so']}")
    return _built["so"]


def _sections(data: bytes, name: bytes):
    """(offset, size) of each ELF64 section whose name starts with `name` (the .so's `.nv_fatbin`;
    the probe verification/device/probes/cubin_damage.py reads a cubin's `.text.*` with it)."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    strtab_off = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)[0]
    for i in range(shnum):
        h = shoff + i * shentsize
        sh_name, = struct.unpack_from("<I", data, h)
        end = data.index(b"\0", strtab_off + sh_name)
        if data[strtab_off + sh_name:end].startswith(name):
            off, size = struct.unpack_from("<QQ", data, h + 0x18)
            yield off, size


def _cubins(data: bytes):
    """(start, length, arch) of every cubin entry in the .so's fatbinaries."""
    for off, size in _sections(data, b".nv_fatbin"):
        p, end = off, off + size
        while p + 16 <= end:
            magic, _, hsz, fsz = struct.unpack_from("<IHHQ", data, p)
            if magic != FATBIN_MAGIC:
                p += 8  # blobs are 8-byte aligned
                continue
            q = p + hsz
            while q < p + hsz + fsz:
                kind, _, ehsz, psz = struct.unpack_from("<HHIQ", data, q)
                arch, = struct.unpack_from("<I", data, q + 28)
                if kind == ELF_KIND:
                    yield q + ehsz, psz, arch
                q += ehsz + psz
            p += hsz + fsz


def damaged_copy(ctx, so: Path) -> Path:
    """A copy of `so` in a folder of its own, the second half of each cubin zeroed."""
    data = bytearray(so.read_bytes())
    damaged = []
    for start, length, arch in _cubins(bytes(data)):
        if data[start:start + 4] != b"\x7fELF":
            raise RuntimeError(f"the sm_{arch} entry is not a plain ELF (compressed?): the case damages plain cubins")
        half = length // 2
        data[start + half:start + length] = bytes(length - half)
        damaged.append(f"sm_{arch} cubin ({length} bytes): bytes {half}-{length} zeroed")
    if not damaged:
        raise RuntimeError(f"no cubin found in {so.name}'s .nv_fatbin")
    ctx.note("damaged copy: " + "; ".join(damaged))
    folder = Path(tempfile.mkdtemp(prefix="errkb-damaged-ext-"))
    out = folder / so.name
    out.write_bytes(bytes(data))
    return out


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(NAME, str(path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _x(ctx):
    return ctx.torch.randn(4096, device=ctx.device, dtype=ctx.torch.float32)


def reproduce(ctx):
    so = _build(ctx)
    bad = _load(damaged_copy(ctx, so))

    def launch():
        bad.scale(_x(ctx), 2.0)
        ctx.torch.cuda.synchronize()

    ctx.expect_error(launch)


def fix_1(ctx):
    ctx.skip("compares nvidia-smi's driver CUDA version with the build's by eye (a diagnostic, nothing to run)")


def fix_2(ctx):
    ctx.skip("needs an older driver, or another library release, than the GPU machine has")


def fix_3(ctx):
    """A clean copy of the same build (what a reinstall gives back) loads and computes 2 * x."""
    so = _build(ctx)
    clean = Path(tempfile.mkdtemp(prefix="errkb-clean-ext-")) / so.name
    shutil.copyfile(so, clean)
    mod = _load(clean)
    x = _x(ctx)
    out = ctx.call(mod.scale, x, 2.0)
    ctx.close(out, 2.0 * x, **TOL)
