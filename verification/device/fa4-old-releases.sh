#!/usr/bin/env bash
# Older FlashAttention-4 code for the cases that compare releases (verification/cases/_fa4_releases.py).
#   here:        bash verification/device/fa4-old-releases.sh prepare [FA_REPO]
#     .gpu/fa4old    flash-attn-4 4.0.0b4, b5 and b29 wheels, quack-kernels 0.2.10 unpacked, and
#                    flash_attn/cute at 9d871f9f (git archive from FA_REPO, a flash-attention clone)
#     .gpu/cdsl441/{a,b,c}  nvidia-cutlass-dsl 4.4.1 (the DSL of 4.0.0b4) in three pieces that fit
#                    beside the tracked tree and a payload call in one device call
#   device:      carry .gpu/cdsl441/a with payload call 3 (fa4only) and run `... part a`, then
#                `part b`, then carry .gpu/cdsl441/c and .gpu/fa4old and run `... part c` before the
#                cases: the DSL lands in /root/cdsl441 (ERRKB_CUTE_DSL_OLD's default).
# Nothing here is committed: the wheels and the source tree are upstream's.
set -eu
LIBS=nvidia_cutlass_dsl_libs_base-4.4.1-cp312-cp312-manylinux_2_28_x86_64.whl
case "${1:-}" in
prepare)
  repo=${2:-/work/.mirror/Dao-AILab+flash-attention/repo}
  dl=$(mktemp -d)
  mkdir -p .gpu/fa4old .gpu/cdsl441/a .gpu/cdsl441/b .gpu/cdsl441/c
  PIP_CONSTRAINT=/dev/null python3 -m pip download -q --no-deps -d .gpu/fa4old "flash-attn-4==4.0.0b4" "flash-attn-4==4.0.0b5" "flash-attn-4==4.0.0b29"
  PIP_CONSTRAINT=/dev/null python3 -m pip download -q --no-deps -d "$dl" "quack-kernels==0.2.10"
  rm -rf .gpu/fa4old/quack-0.2.10 .gpu/fa4old/main-9d871f9f && mkdir -p .gpu/fa4old/quack-0.2.10 .gpu/fa4old/main-9d871f9f
  python3 -m zipfile -e "$dl"/quack_kernels-0.2.10-*.whl .gpu/fa4old/quack-0.2.10
  git --git-dir="$repo" archive 9d871f9f flash_attn/cute | tar -x -C .gpu/fa4old/main-9d871f9f
  PIP_CONSTRAINT=/dev/null python3 -m pip download -q --no-deps -d "$dl" --python-version 3.12 \
    --platform manylinux_2_28_x86_64 --only-binary=:all: "nvidia-cutlass-dsl==4.4.1" "nvidia-cutlass-dsl-libs-base==4.4.1"
  (cd "$dl" && sha256sum "$LIBS" > libs.sha256 && split -b 25000000 -d "$LIBS" libs.part)
  mv "$dl"/libs.part00 .gpu/cdsl441/a/ && mv "$dl"/libs.part01 .gpu/cdsl441/b/
  mv "$dl"/libs.part02 "$dl"/libs.sha256 "$dl"/nvidia_cutlass_dsl-4.4.1-py3-none-any.whl .gpu/cdsl441/c/
  rm -rf "$dl" ;;
part)  # device: a, b, then c (which assembles and unpacks)
  mkdir -p /root/cdslparts && cp ".gpu/cdsl441/$2"/* /root/cdslparts/
  if [ "$2" = c ]; then
    cd /root/cdslparts && cat libs.part0* > "$LIBS" && sha256sum -c libs.sha256
    python3 -m zipfile -e "$LIBS" /root/cdsl441 && python3 -m zipfile -e nvidia_cutlass_dsl-4.4.1-py3-none-any.whl /root/cdsl441
  fi ;;
*) echo "usage: $0 prepare [FA_REPO] | part a|b|c" >&2; exit 2 ;;
esac
