"""Which damage to a torch extension's cubin makes the driver answer "device kernel image is
invalid"? The case for cuda-device-kernel-image-invalid overwrote the cubin's section header table
and the launch ran (H100, driver 580.159.04, torch 2.11.0+cu130): the driver does not read those
headers. This probe builds the case's one-kernel extension once, writes one damaged copy per kind
of damage, and launches each in a fresh process that never loads the clean build, printing what
each launch raised. One GPU call (~2 min, most of it the build).

    PYTHONPATH=. python3 verification/device/probes/cubin_damage.py > $OUT/cubin_damage.txt
"""

import importlib.util
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

CASE = Path(__file__).resolve().parents[2] / "cases" / "env-arch" / "cuda-device-kernel-image-invalid.py"

CHILD = r"""
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location(sys.argv[2], sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
x = torch.randn(4096, device="cuda")
try:
    y = mod.scale(x, 2.0)
    torch.cuda.synchronize()
    print("ran; max |y - 2x| =", (y - 2 * x).abs().max().item())
except Exception as exc:
    print(f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
"""


def _case():
    spec = importlib.util.spec_from_file_location("kimage_case", CASE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _fill(data, start, size, byte=b"\xff"):
    data[start:start + size] = byte * size


def damages(case):
    """name -> function(bytearray of the .so, start and length of the cubin) that damages it."""
    def phdrs(d, s, n):
        phoff, = struct.unpack_from("<Q", d, s + 0x20)
        phentsize, phnum = struct.unpack_from("<HH", d, s + 0x36)
        _fill(d, s + phoff, phentsize * phnum)

    def flags(d, s, n):
        struct.pack_into("<I", d, s + 0x30, 0xFFFFFFFF)

    def machine(d, s, n):
        struct.pack_into("<H", d, s + 0x12, 0x3E)  # EM_X86_64 instead of EM_CUDA

    def magic(d, s, n):
        d[s + 1:s + 4] = b"XXX"

    def text(d, s, n):
        cubin = bytes(d[s:s + n])
        for off, size in case._sections(cubin, b".text."):
            _fill(d, s + off, size)

    def nvinfo(d, s, n):
        cubin = bytes(d[s:s + n])
        for off, size in case._sections(cubin, b".nv.info"):
            _fill(d, s + off, size, b"\x00")

    def half(d, s, n):
        _fill(d, s + n // 2, n - n // 2, b"\x00")

    def shoff(d, s, n):
        struct.pack_into("<Q", d, s + 0x28, 0xFFFFFFF0)

    return {"program headers 0xFF": phdrs, "e_flags 0xFFFFFFFF": flags, "e_machine x86-64": machine,
            "ELF magic": magic, ".text.* 0xFF": text, ".nv.info* zeroed": nvinfo,
            "second half zeroed": half, "e_shoff out of range": shoff}


def main() -> int:
    case = _case()
    import torch

    major, minor = torch.cuda.get_device_capability()
    folder = Path(tempfile.mkdtemp(prefix="errkb-probe-kimage-"))
    ext = case.build(case.NAME, f"{major}.{minor}", str(folder))
    so = Path(ext.__file__)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, built {so.name} for sm_{major}{minor}")
    clean = bytes(so.read_bytes())
    cubins = list(case._cubins(clean))
    print("cubins:", [(arch, length) for _, length, arch in cubins])
    for name, damage in {"none (clean copy)": lambda d, s, n: None, **damages(case)}.items():
        data = bytearray(clean)
        for start, length, _ in cubins:
            damage(data, start, length)
        out = Path(tempfile.mkdtemp(prefix="errkb-probe-copy-")) / so.name
        out.write_bytes(bytes(data))
        run = subprocess.run([sys.executable, "-c", CHILD, str(out), case.NAME], capture_output=True, text=True,
                             timeout=120)
        said = (run.stdout.strip() or run.stderr.strip().splitlines()[-1:] or ["(nothing)"])
        print(f"{name:28s} rc={run.returncode}: {said if isinstance(said, str) else said[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
