#!/usr/bin/env bash
# Re-harvest every package errkb covers from released upstream code.
# Downloads go to $CACHE (default ../cache/dl); nothing downloaded is committed.
#   scripts/harvest-all.sh            download what is missing, then harvest
# Older releases (for the wording they printed then) come from git tags and PyPI sdists.
# flash-attn (FA2 csrc/ + FA3 hopper/) is read from git tags of a Dao-AILab/flash-attention
# clone at $FA_REPO, because its sdists do not ship hopper/.
# PyTorch's C++ SDPA checks (aten/src/ATen/native/transformers) are harvested from a folder
# per release under $CACHE/torch-cpp/<version>/ when present.
set -euo pipefail
CACHE=${CACHE:-../cache/dl}
FA_REPO=${FA_REPO:-../.mirror/Dao-AILab+flash-attention/repo}
FI_REPO=${FI_REPO:-../.mirror/flashinfer-ai+flashinfer/repo}  # a flashinfer-ai/flashinfer clone
XF_REPO=${XF_REPO:-../.mirror/facebookresearch+xformers/repo}  # a facebookresearch/xformers clone
ERRKB=${ERRKB:-.venv/bin/errkb}
plat=(--only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_34_x86_64)

fetch_wheel() {  # package version folder [pip args...]
  local pkg=$1 ver=$2 dir=$CACHE/$3; shift 3
  ls "$dir"/*"$ver"* >/dev/null 2>&1 || python3 -m pip download -q --no-deps "$@" -d "$dir" "$pkg==$ver"
  ls "$dir"/*-"$ver"[-.]* | head -1
}
fetch_sdist() {  # package version folder: sdists straight from the index (no metadata build)
  local pkg=$1 ver=$2 dir=$CACHE/$3 url
  mkdir -p "$dir"
  if ! ls "$dir"/*-"$ver".tar.gz >/dev/null 2>&1; then
    url=$(curl -s -H "Accept: application/vnd.pypi.simple.v1+json" "https://pypi.org/simple/$pkg/" |
      python3 -c "import json,sys; print(next(f['url'] for f in json.load(sys.stdin)['files'] if f['filename'].endswith('-$ver.tar.gz')))")
    (cd "$dir" && curl -sO "$url")
  fi
  ls "$dir"/*-"$ver".tar.gz
}

# FlashInfer's 0.0.x and 0.1.x tags keep the Python package under python/: lay one out as its wheel does
# (those wheels were never on PyPI).
flashinfer_tag_as_wheel() {  # repo tag -> folder
  local out=$CACHE/flashinfer-$2-wheel-layout
  if [ ! -d "$out" ]; then
    local tmp; tmp=$(mktemp -d)
    git -C "$1" archive "$2" python/flashinfer python/csrc include | tar -x -C "$tmp"
    mkdir -p "$out/flashinfer/data"
    cp -r "$tmp/python/flashinfer/." "$out/flashinfer/"
    cp -r "$tmp/python/csrc" "$out/flashinfer/data/csrc"
    cp -r "$tmp/include" "$out/flashinfer/data/include"
    rm -rf "$tmp"
  fi
  echo "$out"
}

[ -n "${ONLY:-}" ] || for v in 0.2.15 0.3.6 0.4.6.post5 0.4.9.post6 0.5.3 0.5.4 0.5.8 0.5.12 0.5.16; do $ERRKB harvest sglang $v "$(fetch_sdist sglang $v sglang)"; done
[ -n "${ONLY:-}" ] || for v in 0.5.20 0.5.22 0.5.23; do $ERRKB harvest sglang $v "$(fetch_wheel sglang $v sglang "${plat[@]}")"; done
for v in 0.4.8 0.4.9 0.4.10; do $ERRKB harvest sglang-kernel $v "$(fetch_wheel sglang-kernel $v sglang-kernel "${plat[@]}")"; done
for v in 0.3.21; do $ERRKB harvest sgl-kernel $v "$(fetch_wheel sgl-kernel $v sgl-kernel "${plat[@]}")"; done
for v in 0.2.8 1.0.9 2.0.9 2.1.2 2.2.5 2.3.6 2.4.2 2.5.9.post1 2.6.3 2.7.4.post1 2.8.0.post2 2.8.2 2.8.3 2.8.3.post1; do $ERRKB harvest flash-attn $v "git:$FA_REPO@v$v"; done
for v in 4.0.0b20 4.0.0b30 4.0.0b36; do $ERRKB harvest flash-attn-4 $v "$(fetch_wheel flash-attn-4 $v flash-attn-4 --pre)"; done
for v in 0.0.4 0.0.9 0.1.6; do $ERRKB harvest flashinfer-python $v "$(flashinfer_tag_as_wheel "$FI_REPO" v$v)"; done
for v in 0.2.0.post2 0.2.14.post1; do $ERRKB harvest flashinfer-python $v "git:$FI_REPO@v$v"; done
for v in 0.6.16 0.7.0 0.7.2 0.7.4; do $ERRKB harvest flashinfer-python $v "$(fetch_wheel flashinfer-python $v flashinfer)"; done
for v in 0.2.7 0.3.3 0.4.3 0.5.5 0.6.6.post1 0.7.3 0.8.5 0.9.2 0.10.2 0.11.0 0.19.1 0.23.0 0.27.1 0.30.0 0.31.0 0.32.0 0.33.0 0.34.0; do
  $ERRKB harvest vllm $v "$(fetch_sdist vllm $v vllm)"; done
# 0.15.0/0.15.1 published no sdist (0.12-0.14 and 0.16-0.18 did): the x86_64 wheel, which lacks csrc/
# (no C++ sites in 0.15.1) and carries the vendored FA's layers/ and ops/ the sdists lack.
$ERRKB harvest vllm 0.15.1 "$(fetch_wheel vllm 0.15.1 vllm --only-binary=:all: --python-version 3.12 --platform manylinux_2_31_x86_64)"
# Neighbours users meet around the backends: xformers' fmha dispatcher (git tags), transformers'
# attn_implementation checks (pure-Python wheels).
for v in 0.0.13 0.0.16 0.0.20 0.0.23.post1 0.0.28.post3 0.0.32.post2 0.0.35; do $ERRKB harvest xformers $v "git:$XF_REPO@v$v"; done
for v in 4.36.2 4.41.2 4.46.3 4.51.3 4.57.3 5.25.0; do $ERRKB harvest transformers $v "$(fetch_wheel transformers $v transformers)"; done
# diffusers' attention processors and (0.35+) attention dispatcher, as diffusion pipelines hit them.
for v in 0.12.1 0.15.1 0.18.2 0.21.4 0.27.2 0.31.0 0.35.2 0.42.1; do $ERRKB harvest diffusers $v "$(fetch_wheel diffusers $v diffusers)"; done
# Triton's resource, autotuning and dtype-support messages (Python files of its wheels).
for v in 2.1.0 3.0.0; do $ERRKB harvest triton $v "$(fetch_wheel triton $v triton --only-binary=:all: --python-version 3.11 --platform manylinux2014_x86_64)"; done
for v in 3.5.1 3.6.0 3.7.0 3.7.1 3.8.0 3.9.0; do $ERRKB harvest triton $v "$(fetch_wheel triton $v triton "${plat[@]}")"; done  # 3.6+: by `errkb update`, 2026-12-02
# PyTorch from its small macOS arm64 wheels (the last patch of each line, every release from 2.12):
# the Python attention modules (torch) and the SDPA headers the wheel ships (pytorch-headers).
# --platform macosx_14_0_arm64 also accepts the 11_0 wheels, and 2.12 on ship only 14_0 ones.
# 2.0.x/2.1.x wheels hold no file in scope and 2.0-2.3 wheels ship no transformers/ header:
# their SDPA checks are C++ only, so those lines are not harvested.
torch_mac=(--only-binary=:all: --platform macosx_14_0_arm64 --python-version 3.12)
for v in 2.2.2 2.3.1 2.4.1 2.5.1 2.6.0 2.7.1 2.8.0 2.9.1 2.10.0 2.11.0 2.12.0 2.12.1 2.13.0 2.14.0 2.14.1 2.15.0; do
  wheel=$(fetch_wheel torch $v torch "${torch_mac[@]}")
  $ERRKB harvest torch $v "$wheel"
  [[ $v == 2.[23].* ]] || $ERRKB harvest pytorch-headers $v "$wheel"
done
for d in "$CACHE"/torch-cpp/*/; do
  [ -d "$d" ] && $ERRKB harvest pytorch-aten "$(basename "$d")" "$d"
done
$ERRKB stats
