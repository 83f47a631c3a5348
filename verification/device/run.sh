#!/usr/bin/env bash
# The SM90 suite on the lent H200, in six back-to-back calls on one warm machine (it keeps /root
# for ~30 s after a call). `make gpu-payload` (run here first) lays out .gpu/call1 ... .gpu/call6,
# each under the lock's call_limit_mib, which leaves room for the tracked tree (a call carries both):
#   call 1 (carry .gpu/call1):           python3 verification/device/payload_install.py 1
#   call 2 (carry .gpu/call2):           python3 verification/device/payload_install.py 2
#   call 3 (carry .gpu/call3):           python3 verification/device/payload_install.py 3
#   call 4 (carry .gpu/call4):           ERRKB_COMMIT=<sha> bash verification/device/run.sh
#   call 5 (carry .gpu/call5):           python3 verification/device/payload_install.py 5
#   call 6 (carry .gpu/call6 [.gpu/fa .gpu/fa3]): ERRKB_COMMIT=<sha> bash verification/device/run.sh host
# Every call first checks the pieces it carries against .gpu/call<N>/manifest.json and unpacks the
# payloads they complete into /root/<site> (payload_install.py); a missing or damaged piece, or a
# payload an earlier call should have installed, stops the call with exit status 3 and a message
# naming it, before anything runs. Calls 1-3 and 5 only unpack (the CuTe DSL's MLIR library alone is
# over one call). Call 4 runs every kernel backend as two shards at once (each with one worker per
# backend); call 6 runs SGLang's server-level checks, vLLM's host-side checks and, when .gpu/fa (FA2)
# and/or .gpu/fa3 (FA3) are carried, the flash-attn cases, each in a process of its own whose path
# has that project's tree (SGLang's must not shadow the FA4 wrapper files and shims of call 4;
# SGLang imports vLLM where it finds it; FA2's `flash_attn` would shadow flash-attn-4's
# `flash_attn.cute`). Result lines land in $OUT/r*.jsonl; then, here: errkb verify merge <files>.
set -u
export PYTHONUNBUFFERED=1
start=$(date +%s)
FA4SITE=/root/fa4site FISITE=/root/fisite SGLFA4=/root/sglfa4 SGLSITE=/root/sglsite VLLMSITE=/root/vllmsite

install_payload() {  # CALL NEEDED-PAYLOADS
  python3 verification/device/payload_install.py "$1" --need "$2" \
    || { echo "run.sh: the payload of call $1 is not complete (see above); nothing was run" >&2; exit 3; }
}

if [ "${1:-}" = "host" ]; then
  install_payload 6 sglang-server,sgl-kernel-py,vllm,flashinfer
  FA_LIBS=
  source verification/device/flash-attn-install.sh || exit 3
  export ERRKB_SGL_KERNEL_PY=/root/sglkpy  # sgl_kernel's .py files, off the import path (cases/sglang/_sglk.py)
  fa4="$FA4SITE:$FA4SITE/nvidia_cutlass_dsl/dsl_packages"
  (PYTHONPATH="$SGLSITE:$fa4" timeout "${LIMIT:-470}" python3 -m errkb.verify run --backend sglang-server \
     --timeout 240 --out "$OUT/r-sglang-server.jsonl" --log "$OUT/w-sglang-server.log" > "$OUT/p-sglang-server.txt" 2>&1) &
  (PYTHONPATH="$VLLMSITE:$FISITE:$SGLSITE" timeout "${LIMIT:-470}" python3 -m errkb.verify run --backend vllm \
     --timeout 240 --out "$OUT/r-vllm.jsonl" --log "$OUT/w-vllm.log" > "$OUT/p-vllm.txt" 2>&1) &
  if [ -n "$FA_LIBS" ]; then  # FA2/FA3 (see flash-attn-install.sh)
    (PYTHONPATH="$FASITE" ERRKB_VERIFY_LIBS="$FA_LIBS" timeout "${LIMIT:-470}" python3 -m errkb.verify run --backend flash-attn \
       --timeout 240 --out "$OUT/r-flash-attn.jsonl" --log "$OUT/w-flash-attn.log" > "$OUT/p-flash-attn.txt" 2>&1) &
  fi
  wait
  grep -hv '^confirmed' "$OUT"/p-*.txt | tail -60
  exit 0
fi

install_payload 4 fa4,sglang-fa4,flashinfer,xformers-abi
export ERRKB_XFORMERS_SITE=/root/xfsite  # xformers 0.0.28.post3 + CUDA 12 runtime, unpacked (cases/_xformers_wheels.py)
# SGLang's FA4 wrapper and shims first, then FlashInfer (with its tvm-ffi), then flash-attn-4 and the CuTe DSL.
export PYTHONPATH="$SGLFA4:$FISITE:$FA4SITE:$FA4SITE/nvidia_cutlass_dsl/dsl_packages${PYTHONPATH:+:$PYTHONPATH}"
backends=(--backend fa4 --backend flashinfer --backend flex-attention --backend sdpa --backend sglang)
for i in 0 1; do
  (timeout "${LIMIT:-470}" python3 -m errkb.verify run "${backends[@]}" --shard $i/2 --jobs 4 --timeout 240 \
     --out "$OUT/r$i.jsonl" --log "$OUT/w$i.log" > "$OUT/p$i.txt" 2>&1
   echo "shard $i rc=$? $(( $(date +%s) - start ))s" >> "$OUT/p$i.txt") &
done
wait
grep -hv '^confirmed\|^skipped' "$OUT"/p*.txt
