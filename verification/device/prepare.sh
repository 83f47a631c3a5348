#!/usr/bin/env bash
# Prepares what the lent H200 needs for `errkb verify`, in .gpu/ (ignored by git):
#   .gpu/a1  the CuTe DSL MLIR library (~52 MB)      carried by call 1
#   .gpu/a2  the CuTe DSL CUDA-13 runtime (~14 MB)    carried by call 2
#   .gpu/b   flash-attn-4 4.0.0b36 + small wheels     carried by call 2
#   .gpu/sgl SGLang 0.5.23's FA4 wrapper files        carried by call 2
#   .gpu/fi  flashinfer-python 0.7.4 (~17 MB packed) + apache-tvm-ffi   carried by call 2
#   .gpu/sglsrv SGLang 0.5.23's Python tree + small wheels + sgl_kernel's .py files   carried by call 3
# ../shared/gpu/pack-fa4.sh packs the CUDA-13 libraries as one 61 MB part, which together with this
# repository's ~6 MB working tree is over a call's 64 MiB; so it is split in two here.
# Usage (repo root): bash verification/device/prepare.sh [sglang-0.5.23-*.whl] [flashinfer_python-0.7.4-*.whl] [vllm-0.33.0.tar.gz]
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >> .git/info/exclude
[ -f .gpu/a/cu13.tar.xz ] && [ -d .gpu/b ] || bash ../shared/gpu/pack-fa4.sh .gpu
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
xz -dc .gpu/a/cu13.tar.xz | tar -x -C "$tmp"
mkdir -p .gpu/a1 .gpu/a2
tar -C "$tmp" -cf - nvidia_cutlass_dsl/dsl_packages | xz -T0 -6 > .gpu/a1/cu13-part1.tar.xz
tar -C "$tmp" -cf - --exclude=nvidia_cutlass_dsl/dsl_packages nvidia_cutlass_dsl | xz -T0 -6 > .gpu/a2/cu13-part2.tar.xz

wheel=${1:-$(ls ../cache/dl/sglang/sglang-0.5.23-*.whl | head -1)}
rm -rf .gpu/sgl && mkdir -p .gpu/sgl
python3 - "$wheel" .gpu/sgl <<'PY'
import sys, zipfile
from pathlib import Path
wheel, dest = sys.argv[1], Path(sys.argv[2])
keep = ("sglang/version.py", "sglang/kernels/kernel_api_logging.py", "sglang/kernels/jit/cute_aot_cache.py",
        "sglang/kernels/ops/attention/fa4_sm120/",
        "sglang/kernels/ops/attention/flash_attention_v4.py", "sglang/kernels/ops/attention/flash_attn/")
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(keep) and not name.endswith("/"):
            z.extract(name, dest)
stub = '"""Stub package file: only the FA4 wrapper and its vendored kernels are carried (errkb verification)."""\n'
for pkg in ("sglang", "sglang/kernels", "sglang/kernels/ops", "sglang/kernels/ops/attention",
            "sglang/kernels/jit", "sglang/srt"):
    (dest / pkg).mkdir(parents=True, exist_ok=True)
    (dest / pkg / "__init__.py").write_text(stub)
# The vendored FA4 reaches into SGLang's server for two things only: whether PDL launches are
# allowed (sglang/kernels/jit/utils: compute capability 9.0 or newer, as upstream decides on CUDA)
# and where a persistent compile cache lives (sglang/srt/environ: none, an in-memory cache).
# These shims answer exactly that, so the kernels under test stay upstream's own code.
(dest / "sglang/kernels/jit/utils").mkdir(parents=True, exist_ok=True)
(dest / "sglang/kernels/jit/utils/__init__.py").write_text(
    '"""errkb shim for SGLang\'s JIT utils: only what the vendored FA4 imports."""\n'
    "import torch\n\n\ndef is_arch_support_pdl() -> bool:\n"
    "    return torch.cuda.get_device_capability()[0] >= 9\n")
(dest / "sglang/srt/environ.py").write_text(
    '"""errkb shim for sglang.srt.environ: no persistent CuTe compile cache."""\n\n\n'
    "class _Unset:\n    def get(self):\n        return None\n\n\n"
    "class _Envs:\n    SGLANG_CUTE_AOT_CACHE_DIR = _Unset()\n\n\nenvs = _Envs()\n")
version = Path(wheel).name.split("-")[1]
(dest / "sglang/_version.py").write_text(f'__version__ = "{version}"\n__version_tuple__ = {tuple(int(x) for x in version.split("."))}\n')
PY
du -sh .gpu/a1 .gpu/a2 .gpu/b .gpu/sgl

fi_wheel=${2:-$(ls ../cache/dl/flashinfer/flashinfer_python-0.7.4-*.whl | head -1)}
rm -rf .gpu/fi && mkdir -p .gpu/fi
python3 verification/device/pack-wheel.py flashinfer "$fi_wheel" .gpu/fi/flashinfer-0.7.4.tar.xz
cp .gpu/b/apache_tvm_ffi-*.whl .gpu/fi/
du -sh .gpu/fi

# SGLang's server code (registry, attention backends) for the sglang-server cases: the whole
# 0.5.23 Python tree plus the pure/small wheels it imports that the device image lacks.
sgl_wheel=${1:-$(ls ../cache/dl/sglang/sglang-0.5.23-*.whl | head -1)}
rm -rf .gpu/sglsrv && mkdir -p .gpu/sglsrv/whl
python3 verification/device/pack-wheel.py python "$sgl_wheel" .gpu/sglsrv/sglang-0.5.23.tar.xz
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .gpu/sglsrv/whl \
  annotated-doc==0.0.7 annotated-types==0.8.0 asttokens==3.0.2 dill==0.4.1 executing==2.3.0 ipython==9.18.1 \
  ipython_pygments_lexers==1.1.1 jedi==0.20.1 matplotlib-inline==0.2.2 msgspec==0.23.0 orjson==3.13.0 parso==0.8.7 \
  pexpect==4.9.0 prompt_toolkit==3.0.53 ptyprocess==0.7.0 pure_eval==0.2.4 pybase64==1.5.1 pydantic==2.14.4 \
  pydantic_core==2.50.5 pyzmq==27.3.0 stack-data==0.6.3 starlette==1.10.0 traitlets==5.16.1 typing-inspection==0.4.5 \
  wcwidth==0.9.4 \
  compressed-tensors==0.18.0 loguru==0.7.3 gguf==0.19.0 openai==2.8.0 distro==1.9.0 jiter==0.19.0 sniffio==1.3.1 \
  partial-json-parser==0.2.1.1.post7
# (the second line: what SGLang's FlashAttention backend and model config import besides sgl_kernel;
# they also import tvm_ffi, which sglang-server-install.sh copies from what call 2 unpacked from
# .gpu/fi (0.1.15.post2): SGLang pins 0.1.11, but only imports it here, for a JIT all-reduce that
# no case runs.)
# sgl_kernel's Python files from the two kernel wheels SGLang's records name (sgl-kernel 0.3.21,
# sglang-kernel 0.4.10, the one 0.5.23 pins), for the cases on sgl_kernel/flash_attn.py: only .py
# files (sgl_kernel/ and 0.3.21's vendored flash_attn_origin/), never the compiled modules (flash_ops
# alone is 0.85-1.1 GB, built for torch 2.14). ~0.2 MB packed.
sglk_dl=../cache/dl/sglk
for spec in sgl-kernel==0.3.21 sglang-kernel==0.4.10; do
  name=$(echo "${spec%%==*}" | tr - _); ls "$sglk_dl/$name-${spec##*==}-"*.whl >/dev/null 2>&1 || \
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux2014_x86_64 -d "$sglk_dl" "$spec"
done
python3 - "$sglk_dl" .gpu/sglsrv/sgl-kernel-py.tar.xz <<'PY'
import glob, io, lzma, sys, tarfile, zipfile
dl, out = sys.argv[1], sys.argv[2]
with lzma.open(out, "wb", preset=6) as raw, tarfile.open(fileobj=raw, mode="w") as tar:
    for name, version in (("sgl_kernel", "0.3.21"), ("sglang_kernel", "0.4.10")):
        with zipfile.ZipFile(sorted(glob.glob(f"{dl}/{name}-{version}-*.whl"))[0]) as z:
            for member in z.namelist():
                if member.endswith(".py") and member.startswith(("sgl_kernel/", "flash_attn_origin/")):
                    entry = tarfile.TarInfo(f"{name}-{version}/{member}")
                    data = z.read(member)
                    entry.size, entry.mode = len(data), 0o644
                    tar.addfile(entry, io.BytesIO(data))
PY
du -sh .gpu/sglsrv

# vLLM 0.33.0's Python tree (from the sdist) and the wheels its config code imports, for the vllm cases.
vllm_sdist=${3:-$(ls ../cache/dl/vllm/vllm-0.33.0.tar.gz | head -1)}
rm -rf .gpu/vllm && mkdir -p .gpu/vllm/whl
python3 verification/device/pack-wheel.py python "$vllm_sdist" .gpu/vllm/vllm-0.33.0.tar.xz
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .gpu/vllm/whl \
  cbor2==6.3.0 openai-harmony==0.0.8 openai==3.57.0 sniffio==1.3.1 distro==1.9.0 jiter==0.19.0 \
  httpx2==2.16.2 httpcore2==2.16.2 truststore==0.10.5
# What importing the attention backends under vLLM's CUDA platform pulls in (vllm/v1/request.py ->
# structured output and tool parsers): the versions vLLM 0.33.0's requirements/common.txt pins.
# xgrammar and llguidance are compiled, but against no torch (xgrammar uses the apache-tvm-ffi of .gpu/fi;
# llguidance 1.7.6 is manylinux_2_31: the device image (Python 3.12.3, Ubuntu 24.04) has glibc 2.39).
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_31_x86_64 --platform manylinux_2_28_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .gpu/vllm/whl \
  'fastapi>=0.133.0,<0.137.0' partial-json-parser==0.2.1.1.post7 cachetools==8.0.2 xgrammar==0.2.8 llguidance==1.7.6
du -sh .gpu/vllm
