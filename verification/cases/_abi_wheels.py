"""Engine wheels built for one torch, imported next to another torch on the CPU (no GPU, no libcuda).

An extension `.so` built against torch X, loaded into a process whose torch is Y, makes the dynamic
loader stop on a symbol of X's libraries that Y's do not export (`undefined symbol: _ZN...`), before
any GPU is touched, provided every library the `.so` lists as NEEDED is found first. So the cases pick
real PyPI wheels whose extension needs nothing this machine lacks (`needed()` reads the list; a file
that needs libcuda.so.1, the driver's library, cannot get that far here and is not used for a symbol):

- vLLM 0.9.2 (METADATA: torch==2.7.0): `vllm/_moe_C.abi3.so` and
  `vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so` need torch's libraries and libcudart.so.12 only;
  `vllm/_C.abi3.so` and `_vllm_fa3_C.abi3.so` also need libcuda.so.1 (not unpacked: no step loads them);
- vLLM 0.6.6.post1 (torch==2.5.1): the same two kinds of file, for the pinned-pair fixes;
- sglang-kernel 0.4.10 (torch==2.14.1; CUDA 13 libraries) and sgl-kernel 0.3.14.post1 (no torch
  requirement; CUDA 12 libraries): both common_ops libraries need libcuda.so.1, so here their loader
  stops on a missing library, never on a symbol (what the sgl_kernel wrapper then prints is what
  sgl-kernel-common-ops-load-failed is about), unless a step puts a stub libcuda.so.1 first
  (verification/cases/_driver_stub.py; verification/cases/_sgl_kernel_abi.py);
- sgl-kernel 0.3.5 (no torch requirement; sglang 0.5.1 pins it with torch==2.8.0): one common_ops
  library at the package's top, imported plainly by sgl_kernel/__init__.py, which links libcuda.so.1 and
  the driver's green-context functions.

torch comes from PyPI through uv's cache (2.5.1 with CUDA 12.4, whose nvidia-* wheels supply
libcudart.so.12 and which torch loads at import; 2.14.1 with CUDA 13.0). Each import runs in a child
process, which prints the class and text of the exception the import raised; the step raises it
again. Wheels are downloaded once into ERRKB_VERIFY_CACHE/wheels and unpacked under the run's
temporary folder, without the large libraries no step loads (each step notes what was left out).
"""

from __future__ import annotations

import json
import re
import subprocess
import zipfile
from pathlib import Path

from verification.cases import _builds as b
from verification.cases import _venv

# project, release, members not unpacked (never loaded by a step; hundreds of MB each)
WHEELS = {
    ("vllm", "0.9.2"): ("vllm/_C.abi3.so", "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so", "vllm/_flashmla_C.abi3.so",
                        "vllm/cumem_allocator.abi3.so"),
    ("vllm", "0.6.6.post1"): ("vllm/_C.abi3.so",),
    ("sglang-kernel", "0.4.10"): ("sgl_kernel/flash_ops.abi3.so",),
    ("sgl-kernel", "0.3.14.post1"): ("sgl_kernel/flash_ops.abi3.so", "sgl_kernel/sm90/common_ops.abi3.so"),
    ("sgl-kernel", "0.3.5"): ("sgl_kernel/flash_ops.abi3.so",),
    ("xformers", "0.0.20"): (),  # cp311 wheels (torch==2.0.1): xformers-flashattention-extension-stale
    ("xformers", "0.0.21"): (),
}

MARK = "ERRKB-IMPORT "
PROBE = """
import json, sys
try:
{body}
    print({mark!r} + json.dumps(None))
except BaseException as e:
    print({mark!r} + json.dumps([type(e).__name__, str(e)]))
"""


def wheel_file(ctx, project: str, release: str) -> Path:
    """`project==release`'s wheel for this machine (manylinux x86_64, CPython 3.11 or abi3) from PyPI,
    downloaded once into ERRKB_VERIFY_CACHE/wheels."""
    folder = _venv.cache_dir() / "wheels"
    stem = f"{project.replace('-', '_')}-{release}-"
    found = sorted(folder.glob(stem + "*.whl"))
    if not found:
        env = _venv.venv(ctx, "fresh-" + b.PIP, pip=b.PIP)
        got = env.pip("download", "--no-deps", "--only-binary", ":all:", f"{project}=={release}", "-d", folder, timeout=900)
        found = sorted(folder.glob(stem + "*.whl"))
        if not found:
            ctx.skip(f"could not download {project} {release}: {got.tail(300)}")
    return found[0]


def requires(ctx, project: str, release: str, name: str = "torch") -> list[str]:
    """The wheel's `Requires-Dist: <name>...` lines (markers cut off)."""
    with zipfile.ZipFile(wheel_file(ctx, project, release)) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    return [line.split(":", 1)[1].split(";")[0].strip() for line in meta.splitlines()
            if re.match(rf"Requires-Dist:\s*{re.escape(name)}\b(?![-_.\w])", line)]


def unpacked(ctx, project: str, release: str) -> Path:
    """The wheel unpacked into a folder of its own (once per run), without WHEELS' left-out members."""
    skip = set(WHEELS[(project, release)])
    dest = _venv._tmp_root() / f"wheel-{project}-{release}"
    stamp = dest / ".errkb-unpacked"
    if not stamp.is_file():
        with zipfile.ZipFile(wheel_file(ctx, project, release)) as z:
            z.extractall(dest, [n for n in z.namelist() if n not in skip])
        stamp.write_text(repr(sorted(skip)))
    why = "not loaded by this step" + ("; with no GPU sgl_kernel picks sm100/" if any("/sm90/" in n for n in skip) else "")
    ctx.note(f"{project} {release} ({wheel_file(ctx, project, release).name}) unpacked"
             + (f" without {', '.join(sorted(skip))} ({why})" if skip else ""))
    return dest


def torch_env(ctx, torch: str) -> _venv.Venv:
    """PyPI's CUDA build of `torch` with numpy, installed by uv from its cache (the environment
    _tiny_llama.cuda_torch_without_gpu makes: same key, same recipe)."""
    _, env = b.uv_env(ctx, "cuda-" + torch.replace("=", "-"), torch, "numpy")
    return env


def needed(so: Path) -> list[str]:
    """The shared libraries `so` lists as NEEDED (readelf -d)."""
    out = subprocess.run(["readelf", "-d", str(so)], capture_output=True, text=True, timeout=60).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def run_import(ctx, env: _venv.Venv, body: str, path: Path | None = None, **extra: str) -> tuple[str, str] | None:
    """Run `body` (indented Python, e.g. '    import torch\\n    import vllm._moe_C') in env's Python
    with `path` first on PYTHONPATH; (class, message) of what it raised, or None when it ran through."""
    code = PROBE.format(body=body.rstrip("\n"), mark=MARK)
    if path is not None:
        extra["PYTHONPATH"] = str(path)
    res = env.python_run(code, timeout=600, cwd=_venv._tmp_root(), **extra)
    line = next((l for l in res.output.splitlines() if l.startswith(MARK)), None)
    if line is None:
        raise RuntimeError(f"the child printed no result: {res.tail(800)}")
    got = json.loads(line[len(MARK):])
    return None if got is None else (got[0], got[1])


def raise_again(got: tuple[str, str] | None) -> None:
    """Raise what the child's import raised (builtin class by name), or nothing."""
    if got is not None:
        raise _venv.exception_class(got[0])(got[1])


def torch_line(ctx, env: _venv.Venv) -> str:
    res = env.python_run("import torch; print(torch.__version__, torch.version.cuda, torch._C._GLIBCXX_USE_CXX11_ABI)",
                         timeout=300)
    line = res.output.strip().splitlines()[-1] if res.output.strip() else res.tail(300)
    ctx.note(f"torch in the environment (version, CUDA, C++11 ABI): {line}")
    return line


def symbol(message: str) -> str | None:
    m = re.search(r"undefined symbol: (\S+)", message)
    return m.group(1) if m else None


def demangle(name: str) -> str:
    """c++filt's reading of a mangled C++ name (GNU binutils)."""
    return subprocess.run(["c++filt", name], capture_output=True, text=True, timeout=60).stdout.strip()


def record_fix(area: str, record_id: str, n: int) -> dict:
    """Fix `n` (1-based) of a record, as committed (the step context carries only the record's template)."""
    path = Path(__file__).resolve().parents[2] / "data" / "records" / area / f"{record_id}.json"
    return json.loads(path.read_text())["fixes"][n - 1]
