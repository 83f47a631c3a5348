"""Prepare `.gpu/v11/` (ignored; carried to the lent GPU with `carry=[".gpu/v11"]`) for the GPU steps of
four records of the eleventh session that need files the GPU image does not have:

- `flash-attn-layer-norm-ext-invalid-device-function`: flash-attention v2.8.3's csrc/layer_norm extension
  (dropout_layer_norm), built with the arch flags of its own setup.py (read by running setup.py with
  setuptools' setup() and torch's CUDAExtension captured, so the flags are the file's), reduced to
  ln_api.cpp + ln_fwd_256.cu (the hidden size the steps use; the other sizes register themselves the same
  way). Two builds: `ln-old-toolkit/` with the list setup.py makes under an nvcc older than 11.8 (sm_70,
  sm_80 machine code, no sm_90) and `ln-setup-sm90/` with the list it makes under nvcc >= 11.8 (adds
  sm_90). nvcc 13 cannot compile for sm_70 (CUDA 13 dropped Volta), so sm_70 is left out of both and
  BUILD.txt says so. flash_attn/ops/layer_norm.py of v2.8.3 (the Python wrapper users import) is copied.
- `flashmla-mla-metadata-zero-sm-parts-assert`: deepseek-ai/FlashMLA b31bfe7's get_mla_metadata: the
  function of csrc/flash_api.cpp (cut out of the file verbatim) and csrc/flash_fwd_mla_metadata.cu, built
  with FlashMLA's own nvcc arch (sm_90a). The .cu file's only include, flash_fwd_mla_kernel.h (the MLA
  kernel, which needs CUTLASS/CuTe, not in the clone), is replaced on the same line by a header that
  includes flash_mla.h and static_switch.h of the same commit and defines cutlass::ceil_div, so the
  kernel's lines, and the line number its device assert prints (64), are FlashMLA's.
- `jvp-flash-attention-backward-seqlen-multiple-of-32`: the jvp_flash_attention 0.10.0 wheel (PyPI).
- `attention-gym-benchmark-flex-sdpa-not-close`: examples/benchmark.py of attention-gym 7fdb85d.

Needs: a Python 3.12 with torch 2.11.0 (PyPI, CUDA 13.0: the GPU image's torch), ninja, nvcc 13.0
(CUDA_HOME), clones under ERRKB_VERIFY_GIT (`<owner>+<name>/repo`), the wheel cache ERRKB_VERIFY_CACHE.
Run from the repository root: `python3.12 verification/device/carried_v11.py` (about 10 minutes on two
cores). Writes .gpu/v11/BUILD.txt with versions, flags and sha256 of every file."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import io
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / ".gpu" / "v11"
GIT = Path(os.environ.get("ERRKB_VERIFY_GIT", Path.home() / ".cache" / "errkb-verify" / "git"))
CACHE = Path(os.environ.get("ERRKB_VERIFY_CACHE", Path.home() / ".cache" / "errkb-verify"))
FA = ("Dao-AILab/flash-attention", "v2.8.3")
FLASHMLA = ("deepseek-ai/FlashMLA", "b31bfe7")
GYM = ("meta-pytorch/attention-gym", "7fdb85d")
LN_SOURCES = ["ln_api.cpp", "ln_fwd_256.cu"]
LN_FILES = ["ln.h", "ln_api.cpp", "ln_fwd_256.cu", "ln_fwd_kernels.cuh", "ln_kernel_traits.h", "ln_utils.cuh",
            "static_switch.h", "setup.py"]
MLA_FILES = ["csrc/flash_api.cpp", "csrc/flash_fwd_mla_metadata.cu", "csrc/flash_mla.h", "csrc/static_switch.h"]
LOG: list[str] = []


def export(repo: str, commit: str, paths: list[str], dest: Path) -> Path:
    git = GIT / repo.replace("/", "+") / "repo"
    data = subprocess.run(["git", "--git-dir", str(git), "archive", "--format=tar", commit, "--", *paths],
                          capture_output=True, check=True).stdout
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    full = subprocess.run(["git", "--git-dir", str(git), "rev-parse", commit + "^{commit}"], capture_output=True,
                          text=True, check=True).stdout.strip()
    LOG.append(f"{repo} {commit} ({full}): {' '.join(paths)}")
    return dest


def setup_flags(ln_dir: Path) -> dict:
    """csrc/layer_norm/setup.py run with setup() and CUDAExtension captured: its extension's arguments."""
    import setuptools
    import torch.utils.cpp_extension as ext

    captured = {}

    def fake_extension(name, sources, **kw):
        captured.update(name=name, sources=sources, **kw)
        return name

    saved = (setuptools.setup, ext.CUDAExtension, sys.argv, os.getcwd())
    setuptools.setup, ext.CUDAExtension = (lambda **kw: None), fake_extension
    sys.argv = ["setup.py", "--help"]
    os.chdir(ln_dir)
    try:
        code = compile((ln_dir / "setup.py").read_text(), str(ln_dir / "setup.py"), "exec")
        exec(code, {"__name__": "__main__", "__file__": str(ln_dir / "setup.py")})
    finally:
        setuptools.setup, ext.CUDAExtension, sys.argv = saved[:3]
        os.chdir(saved[3])
    return captured


def gencode_pairs(flags: list[str]) -> list[str]:
    return [flags[i + 1] for i, f in enumerate(flags) if f == "-gencode"]


def without_pairs(flags: list[str], drop) -> list[str]:
    out, i = [], 0
    while i < len(flags):
        if flags[i] == "-gencode" and drop(flags[i + 1]):
            i += 2
            continue
        out.append(flags[i])
        i += 1
    return out


def build(name: str, sources: list[Path], cflags: list[str], cuda_flags: list[str], include: list[Path], where: Path):
    from torch.utils.cpp_extension import load, _get_cuda_arch_flags

    import torch

    where.mkdir(parents=True, exist_ok=True)
    # the CUDA library headers torch's headers include (cusparse.h ...) where the toolkit lacks them: the
    # nvidia-* wheels' copies beside torch
    include = [*include, *Path(torch.__file__).parents[1].glob("nvidia/cu*/include")]
    LOG.append(f"{where.relative_to(OUT)}: module {name}, sources {[s.name for s in sources]}, nvcc flags {cuda_flags}; "
               f"torch's _get_cuda_arch_flags for these flags (TORCH_CUDA_ARCH_LIST={os.environ.get('TORCH_CUDA_ARCH_LIST')}): "
               f"{_get_cuda_arch_flags(cuda_flags)}")
    # each build in a process of its own: a second load() of the same name in one process is renamed
    # (dropout_layer_norm_v1), and the module would no longer import under its name
    spec = {"name": name, "sources": [str(s) for s in sources], "extra_cflags": cflags, "extra_cuda_cflags": cuda_flags,
            "extra_include_paths": [str(p) for p in include], "build_directory": str(where), "verbose": True}
    subprocess.run([sys.executable, __file__, "--build", json.dumps(spec)], check=True)
    for junk in where.iterdir():
        if not junk.name.endswith(".so"):
            shutil.rmtree(junk) if junk.is_dir() else junk.unlink()


def layer_norm(src: Path) -> None:
    ln = export(*FA, [f"csrc/layer_norm/{f}" for f in LN_FILES] + ["flash_attn/ops/layer_norm.py"], src / "fa") / "csrc" / "layer_norm"
    shutil.copy(src / "fa" / "flash_attn" / "ops" / "layer_norm.py", OUT / "flash_attn_ops_layer_norm.py")
    args = setup_flags(ln)
    nvcc = args["extra_compile_args"]["nvcc"]
    LOG.append(f"setup.py's arch pairs with this nvcc: {gencode_pairs(nvcc)}")
    nvcc = without_pairs(nvcc, lambda p: p.endswith("sm_70"))  # nvcc 13 has no sm_70
    cxx = args["extra_compile_args"]["cxx"]
    sources = [ln / s for s in LN_SOURCES]
    os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"  # what a user would set; setup.py's flags override it
    build("dropout_layer_norm", sources, cxx, nvcc, [ln], OUT / "ln-setup-sm90")
    build("dropout_layer_norm", sources, cxx, without_pairs(nvcc, lambda p: p.endswith("sm_90")), [ln],
          OUT / "ln-old-toolkit")


def flashmla(src: Path) -> None:
    root = export(*FLASHMLA, MLA_FILES, src / "mla")
    csrc = root / "csrc"
    api = (csrc / "flash_api.cpp").read_text()
    start = api.index("std::vector<at::Tensor>\nget_mla_metadata(")
    end = api.index("\n}\n", start) + 3
    head = "\n".join(l for l in api[:api.index("std::vector<at::Tensor>")].splitlines()
                     if "cutlass/fast_math.h" not in l)
    (csrc / "errkb_get_mla_metadata.cpp").write_text(
        head + '\n#include "errkb_ceil_div.h"\n' + api[start:end]
        + "\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"get_mla_metadata\", &get_mla_metadata); }\n")
    (csrc / "errkb_ceil_div.h").write_text(
        "#pragma once\nnamespace cutlass {\ntemplate <class T> __host__ __device__ constexpr T ceil_div(T a, T b) "
        "{ return (a + b - 1) / b; }\n}\n")
    (csrc / "errkb_flash_fwd_mla_kernel.h").write_text(
        "#pragma once\n#include <cstdint>\n#include <cstdio>\n#include <cuda_runtime.h>\n"
        '#include "errkb_ceil_div.h"\n#include "flash_mla.h"\n#include "static_switch.h"\n')
    cu = csrc / "flash_fwd_mla_metadata.cu"
    text = cu.read_text()
    assert text.startswith('#include "flash_fwd_mla_kernel.h"\n'), text[:80]
    cu.write_text(text.replace('#include "flash_fwd_mla_kernel.h"', '#include "errkb_flash_fwd_mla_kernel.h"', 1))
    line = next(i + 1 for i, l in enumerate(cu.read_text().splitlines()) if "FLASH_DEVICE_ASSERT(now_idx" in l)
    LOG.append(f"flash_fwd_mla_metadata.cu: device assert on line {line}; get_mla_metadata cut from flash_api.cpp "
               f"characters {start}-{end}")
    host = (csrc / "errkb_get_mla_metadata.cpp").read_text().replace(
        '#include "flash_mla.h"', '#include <cuda_runtime.h>\n#include "errkb_ceil_div.h"\n#include "flash_mla.h"', 1)
    # a .cpp is compiled by g++: the header's __host__ __device__ need cuda_runtime.h first
    (csrc / "errkb_get_mla_metadata.cpp").write_text(host)
    build("errkb_flash_mla_metadata", [csrc / "errkb_get_mla_metadata.cpp", cu], ["-O3", "-std=c++17"],
          ["-O3", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "--use_fast_math"], [csrc],
          OUT / "flashmla-b31bfe7")


def files() -> None:
    wheel = next((CACHE / "wheels").glob("jvp_flash_attention-0.10.0-*.whl"))
    shutil.copy(wheel, OUT / wheel.name)
    export(*GYM, ["examples/benchmark.py"], OUT / "attention-gym-7fdb85d")


def main() -> None:
    import torch

    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    src = REPO / ".gpu" / "v11-src"
    shutil.rmtree(src, ignore_errors=True)
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    LOG.append(f"torch {torch.__version__} (CUDA {torch.version.cuda}), Python {sys.version.split()[0]}, {nvcc}")
    files()
    flashmla(src)
    layer_norm(src)
    for path in sorted(OUT.rglob("*")):
        if path.is_file():
            LOG.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.relative_to(OUT)}")
    (OUT / "BUILD.txt").write_text("\n".join(LOG) + "\n")
    print("\n".join(LOG))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--build"]:
        from torch.utils.cpp_extension import load

        load(**json.loads(sys.argv[2]))
    else:
        main()
