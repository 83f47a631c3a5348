#!/usr/bin/env bash
# Runs ON the lent H200, from the repository root: builds the reduced FlashAttention-3 (flash-attention
# v2.8.3's hopper/, imported as flash_attn_interface over flash_attn_3._C) that the flash-attn cases run
# on next to FA2, and leaves it in $OUT/fa3 as fa3.tar.xz + BUILD, ready to be copied into .gpu/fa3.
# Carry .gpu/fa3-src with the pinned source archive (made here by fa3_src.py; docs/verification.md,
# "The FA3 recipe"):
#   run(carry=[".gpu/fa3-src"], command="bash verification/device/fa3-build.sh")
# Upstream's FLASH_ATTENTION_DISABLE_* switches remove split-KV, paged KV, append-KV, softcap, pack-GQA,
# fp16, clusters, head dims 64/96/256 and the sm8x kernels; of what remains, the head dim 128 and
# 192/V128 forward (bf16, fp8 e4m3) and the bf16 head dim 128 backward are compiled for sm_90a and the
# rest are stubs raising "errkb reduced FA3 build: no ... kernel" (fa3_reduce.py). Host code: upstream's.
# The compile runs in a process of its own session, so it outlives a call stopped at its time limit:
# if it is not done within FA3_WAIT seconds (default 540) this exits 75, and the same command, run
# again while the machine is still warm (30 s), waits for the same build instead of starting over.
# It can run at the same time as fa2-build.sh (their trees and outputs are apart).
# Exit status: 0 packed, 3 archive missing or not the pinned one, 75 still building, 1 failed.
set -euo pipefail

ARCHIVE=.gpu/fa3-src/fa3-src-2.8.3.tar.xz
ARCHIVE_SHA256=d1dc464756945f47c2f07a5b1eb331b9ca3eee6b1d8475c9186dc063780c24ca  # fa3_src.py: v2.8.3 hopper/ + cutlass dc48179 include/
ROOT=${FA3_BUILD_ROOT:-/root/fa3-build}
SRC=$ROOT/flash-attention-2.8.3
WAIT=${FA3_WAIT:-540}
HERE=verification/device
RECIPE=$(cat "$HERE/fa3-build.sh" "$HERE/fa3_reduce.py" | sha256sum | cut -c1-12)
SWITCHES=$(python3 "$HERE/fa3_reduce.py" --env)
start=$(date +%s)

die() { echo "fa3-build.sh: $2" >&2; exit "$1"; }

[ -n "${OUT:-}" ] || die 1 "OUT is not set (this runs inside a device call)"
[ -f "$ARCHIVE" ] || die 3 "$ARCHIVE is missing: make it here with verification/device/fa3_src.py and carry [\".gpu/fa3-src\"]"
echo "$ARCHIVE_SHA256  $ARCHIVE" | sha256sum -c --quiet - || die 3 "$ARCHIVE is not the pinned FA3 source archive"

# Unpack and reduce once per recipe; a later call of the same recipe reuses the tree (and the build).
if [ ! -f "$ROOT/prepared-$RECIPE" ]; then
  rm -rf "$ROOT" && mkdir -p "$ROOT"
  tar -xJf "$ARCHIVE" -C "$ROOT"
  python3 "$HERE/fa3_reduce.py" "$SRC" > "$ROOT/compiled.txt" || die 1 "reducing the sources failed (see above)"
  mkdir -p "$SRC/hopper/flash_attn_3"  # build_ext --inplace copies _C*.so there; v2.8.3's hopper/ has no such folder
  touch "$ROOT/prepared-$RECIPE"
fi

running() { [ -f "$ROOT/build.pid" ] && kill -0 "$(cat "$ROOT/build.pid")" 2>/dev/null; }
if [ ! -f "$ROOT/build.rc" ] && ! running; then
  CUDA_HOME=$(python3 -c 'from torch.utils.cpp_extension import CUDA_HOME; print(CUDA_HOME or "")')
  [ -n "$CUDA_HOME" ] || die 1 "torch finds no CUDA toolkit (nvcc) on this machine"
  echo "building $(wc -l < "$ROOT/compiled.txt") files for sm_90a in $SRC/hopper with $SWITCHES"
  # CUDA 13 keeps CCCL (cub, thrust, libcu++) under include/cccl; upstream's fix (#1949) adds it the same way
  export CPLUS_INCLUDE_PATH="$CUDA_HOME/include/cccl${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}"
  export MAX_JOBS=16 NVCC_THREADS=2 FLASH_ATTENTION_FORCE_BUILD=TRUE
  # shellcheck disable=SC2086  # SWITCHES is NAME=TRUE words
  export $SWITCHES
  date +%s > "$ROOT/build.start"
  # shellcheck disable=SC2016  # expanded by the inner shell
  setsid bash -c 'echo $$ > "$0/build.pid"; cd "$1/hopper" && python3 setup.py build_ext --inplace > "$0/build.log" 2>&1
                  echo $? > "$0/build.rc.tmp" && mv "$0/build.rc.tmp" "$0/build.rc"' "$ROOT" "$SRC" \
    < /dev/null > /dev/null 2>&1 &
  sleep 2
fi

ticks=0
while [ ! -f "$ROOT/build.rc" ] && [ $(( $(date +%s) - start )) -lt "$WAIT" ]; do
  sleep 10
  ticks=$(( ticks + 1 ))
  if [ $(( ticks % 6 )) = 0 ]; then  # ninja's [done/total] every minute
    echo "fa3 $(( $(date +%s) - start ))s: $(grep -o '^\[[0-9]*/[0-9]*\]' "$ROOT/build.log" 2>/dev/null | tail -1)"
  fi
done
mkdir -p "$OUT/fa3"
grep -Ev '^ptxas info|bytes stack frame' "$ROOT/build.log" 2>/dev/null | tail -c 2000000 > "$OUT/fa3/build.log" || true
if [ ! -f "$ROOT/build.rc" ]; then
  running || die 1 "the build process is gone without an exit status (see fa3/build.log)"
  die 75 "still building after ${WAIT}s; run the same command again now (within 30 s) to wait for it"
fi
[ "$(cat "$ROOT/build.rc")" = 0 ] || { tail -40 "$OUT/fa3/build.log"; die 1 "setup.py build_ext failed (fa3/build.log); to retry from scratch: rm -rf $ROOT"; }

so=$(cd "$SRC/hopper" && ls flash_attn_3/_C*.so) || die 1 "the build left no flash_attn_3/_C*.so in $SRC/hopper"
PYTHONPATH="$SRC/hopper" python3 "$HERE/fa3_smoke.py" || die 1 "the built module failed its smoke test (see above)"

XZ_OPT=-T0 tar -cJf "$OUT/fa3/fa3.tar.xz" -C "$SRC/hopper" flash_attn_interface.py "$so"
echo "flash-attn-3=v2.8.3 hopper/ (reduced errkb build $RECIPE: hdim128 + 192/V128 fwd bf16/fp8 e4m3; hdim128 bf16 bwd; sm90a; FLASHATTENTION_DISABLE_ SPLIT PAGEDKV APPENDKV SOFTCAP PACKGQA FP16 CLUSTER HDIM64 HDIM96 HDIM256 SM8x)" > "$OUT/fa3/BUILD"
{
  echo "recipe: verification/device/fa3-build.sh + fa3_reduce.py, sha256 prefix $RECIPE"
  echo "sources: $ARCHIVE sha256 $ARCHIVE_SHA256"
  echo "nvcc: $(nvcc --version | grep -i release)"
  echo "torch: $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)')"
  echo "python: $(python3 --version 2>&1)"
  echo "env: $SWITCHES MAX_JOBS=16 NVCC_THREADS=2 FLASH_ATTENTION_FORCE_BUILD=TRUE CPLUS_INCLUDE_PATH=<CUDA>/include/cccl"
  echo "build seconds: $(( $(stat -c %Y "$ROOT/build.rc") - $(cat "$ROOT/build.start") ))"
  echo "compiled: $(tr '\n' ' ' < "$ROOT/compiled.txt")"
  echo "module: $so sha256 $(sha256sum "$SRC/hopper/$so" | cut -d' ' -f1) ($(stat -c %s "$SRC/hopper/$so") bytes)"
  echo "fa3.tar.xz: sha256 $(sha256sum "$OUT/fa3/fa3.tar.xz" | cut -d' ' -f1) ($(stat -c %s "$OUT/fa3/fa3.tar.xz") bytes)"
} > "$OUT/fa3/BUILD.txt"
cat "$OUT/fa3/BUILD" "$OUT/fa3/BUILD.txt"
