#!/usr/bin/env bash
# Runs ON the lent H200, from the repository root: builds the reduced FlashAttention-2 that the
# flash-attn cases run on (call 4 of run.sh) and leaves it in $OUT/fa as fa.tar.xz + BUILD, ready to
# be copied into .gpu/fa. Carry .gpu/fa-src with upstream's flash-attn 2.8.3 sdist (docs/verification.md,
# "FlashAttention-2 and -3 on the H200", says how to fetch it):
#   run(carry=[".gpu/fa-src"], command="bash verification/device/fa2-build.sh")
# Only the hdim128 forward and split-KV forward kernels (bf16 and fp16, causal and not) are compiled
# for sm_90; every other kernel is a stub that raises "errkb reduced FA2 build: no ... kernel", and
# there is no backward (fa2_reduce.py). The host code is upstream's, unchanged.
# The compile runs in a process of its own session, so it outlives a call stopped at its time limit:
# if it is not done within FA2_WAIT seconds (default 540) this exits 75, and the same command, run
# again while the machine is still warm (30 s), waits for the same build instead of starting over.
# FA2_ARCH=80 (default 90) builds for another arch instead, into $OUT/fa-sm80 (copied into
# .gpu/fa-sm80): the binary a wheel without this GPU's arch is, for fa2-no-kernel-image's case; its
# smoke test is skipped, since this GPU cannot run it.
# Exit status: 0 packed, 3 sdist missing or not the pinned one, 75 still building, 1 failed.
set -euo pipefail

SDIST=.gpu/fa-src/flash_attn-2.8.3.tar.gz
SDIST_SHA256=1e71dd64a9e0280e0447b8a0c2541bad4bf6ac65bdeaa2f90e51a9e57de0370d  # PyPI, flash-attn 2.8.3
ARCH=${FA2_ARCH:-90}
case $ARCH in [0-9][0-9]|[0-9][0-9][0-9]) ;; *) echo "fa2-build.sh: FA2_ARCH must be like 80 or 90" >&2; exit 1 ;; esac
ARCH_LIST=${ARCH%?}.${ARCH: -1}  # 80 -> 8.0 (TORCH_CUDA_ARCH_LIST)
if [ "$ARCH" = 90 ]; then NAME=fa; else NAME=fa-sm$ARCH; fi
ROOT=${FA2_BUILD_ROOT:-/root/fa2-build-sm$ARCH}
SRC=$ROOT/flash_attn-2.8.3
WAIT=${FA2_WAIT:-540}
HERE=verification/device
RECIPE=$(cat "$HERE/fa2-build.sh" "$HERE/fa2_reduce.py" | sha256sum | cut -c1-12)
start=$(date +%s)

die() { echo "fa2-build.sh: $2" >&2; exit "$1"; }

[ -n "${OUT:-}" ] || die 1 "OUT is not set (this runs inside a device call)"
[ -f "$SDIST" ] || die 3 "$SDIST is missing: fetch it here (see docs/verification.md) and carry [\".gpu/fa-src\"]"
echo "$SDIST_SHA256  $SDIST" | sha256sum -c --quiet - || die 3 "$SDIST is not the pinned flash-attn 2.8.3 sdist"

# Unpack and reduce once per recipe; a later call of the same recipe reuses the tree (and the build).
if [ ! -f "$ROOT/prepared-$RECIPE" ]; then
  rm -rf "$ROOT" && mkdir -p "$ROOT"
  tar -xzf "$SDIST" -C "$ROOT"
  [ -f "$SRC/csrc/cutlass/include/cutlass/cutlass.h" ] || die 1 "the sdist has no csrc/cutlass"
  python3 "$HERE/fa2_reduce.py" "$SRC" > "$ROOT/compiled.txt" || die 1 "reducing the sources failed (see above)"
  touch "$ROOT/prepared-$RECIPE"
fi

running() { [ -f "$ROOT/build.pid" ] && kill -0 "$(cat "$ROOT/build.pid")" 2>/dev/null; }
if [ ! -f "$ROOT/build.rc" ] && ! running; then
  echo "building $(wc -l < "$ROOT/compiled.txt") translation units + flash_api.cpp for sm_$ARCH in $SRC"
  export TORCH_CUDA_ARCH_LIST=$ARCH_LIST FLASH_ATTN_CUDA_ARCHS=$ARCH MAX_JOBS=16 FLASH_ATTENTION_FORCE_BUILD=TRUE
  date +%s > "$ROOT/build.start"
  # shellcheck disable=SC2016  # expanded by the inner shell
  setsid bash -c 'echo $$ > "$0/build.pid"; cd "$1" && python3 setup.py build_ext --inplace > "$0/build.log" 2>&1
                  echo $? > "$0/build.rc.tmp" && mv "$0/build.rc.tmp" "$0/build.rc"' "$ROOT" "$SRC" \
    < /dev/null > /dev/null 2>&1 &
  sleep 2
fi

ticks=0
while [ ! -f "$ROOT/build.rc" ] && [ $(( $(date +%s) - start )) -lt "$WAIT" ]; do
  sleep 10
  ticks=$(( ticks + 1 ))
  if [ $(( ticks % 6 )) = 0 ]; then  # ninja's [done/total] every minute
    echo "$(( $(date +%s) - start ))s: $(grep -o '^\[[0-9]*/[0-9]*\]' "$ROOT/build.log" 2>/dev/null | tail -1)"
  fi
done
mkdir -p "$OUT/$NAME"
tail -c 4000000 "$ROOT/build.log" > "$OUT/$NAME/build.log" 2>/dev/null || true
if [ ! -f "$ROOT/build.rc" ]; then
  running || die 1 "the build process is gone without an exit status (see $NAME/build.log)"
  die 75 "still building after ${WAIT}s; run the same command again now (within 30 s) to wait for it"
fi
[ "$(cat "$ROOT/build.rc")" = 0 ] || { tail -40 "$ROOT/build.log"; die 1 "setup.py build_ext failed ($NAME/build.log); to retry from scratch: rm -rf $ROOT"; }

so=$(cd "$SRC" && ls flash_attn_2_cuda*.so) || die 1 "the build left no flash_attn_2_cuda*.so in $SRC"
DEVICE_ARCH=$(python3 -c 'import torch; print("%d%d" % torch.cuda.get_device_capability())')
if [ "$DEVICE_ARCH" = "$ARCH" ]; then
  PYTHONPATH="$SRC" python3 "$HERE/fa2_smoke.py" || die 1 "the built module failed its smoke test (see above)"
  SMOKE="passed"
else
  SMOKE="not run (built for sm_$ARCH, this GPU is sm_$DEVICE_ARCH)"
fi

XZ_OPT=-T0 tar --exclude=__pycache__ -cJf "$OUT/$NAME/fa.tar.xz" -C "$SRC" flash_attn "$so"
echo "flash-attn${NAME#fa}=2.8.3 (reduced errkb build $RECIPE: hdim128 fwd + splitkv fwd; bf16/fp16; sm$ARCH; no bwd)" > "$OUT/$NAME/BUILD"
{
  echo "recipe: verification/device/fa2-build.sh + fa2_reduce.py, sha256 prefix $RECIPE"
  echo "sdist: $SDIST sha256 $SDIST_SHA256"
  echo "nvcc: $(nvcc --version | grep -i release)"
  echo "torch: $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)')"
  echo "python: $(python3 --version 2>&1)"
  echo "env: TORCH_CUDA_ARCH_LIST=$ARCH_LIST FLASH_ATTN_CUDA_ARCHS=$ARCH MAX_JOBS=16 FLASH_ATTENTION_FORCE_BUILD=TRUE"
  echo "smoke test: $SMOKE"
  echo "build seconds: $(( $(stat -c %Y "$ROOT/build.rc") - $(cat "$ROOT/build.start") ))"
  echo "compiled: flash_api.cpp $(tr '\n' ' ' < "$ROOT/compiled.txt")"
  echo "module: $so sha256 $(sha256sum "$SRC/$so" | cut -d' ' -f1) ($(stat -c %s "$SRC/$so") bytes)"
  echo "fa.tar.xz: sha256 $(sha256sum "$OUT/$NAME/fa.tar.xz" | cut -d' ' -f1) ($(stat -c %s "$OUT/$NAME/fa.tar.xz") bytes)"
} > "$OUT/$NAME/BUILD.txt"
cat "$OUT/$NAME/BUILD" "$OUT/$NAME/BUILD.txt"
