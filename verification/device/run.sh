#!/usr/bin/env bash
# The SM90 suite on the lent H200, in three back-to-back calls (the machine keeps /root between
# calls only while warm, ~30 s):
#   call 1 (carry .gpu/a1):  mkdir -p /root/fa4site && xz -dc .gpu/a1/cu13-part1.tar.xz | tar -x -C /root/fa4site
#   call 2 (carry .gpu/a2 .gpu/b .gpu/sgl .gpu/fi):  ERRKB_COMMIT=<sha> bash verification/device/run.sh
#   call 3 (carry .gpu/sglsrv .gpu/vllm [.gpu/fa]):  ERRKB_COMMIT=<sha> bash verification/device/run.sh host
# Call 2 runs every kernel backend as two shards at once (each with one worker per backend);
# call 3 runs SGLang's server-level and vLLM's host-side checks with their whole Python trees on
# the path, which must not shadow the FA4 wrapper files (and their shims) that call 2 uses, and the
# FA2/FA3 builds (when .gpu/fa is carried) in a process of their own. Result lines
# land in $OUT/r*.jsonl; then, here: errkb verify merge <files>.
set -u
export PYTHONUNBUFFERED=1
start=$(date +%s)
if [ "${1:-}" = "host" ]; then
  # SGLang's and vLLM's host-side checks, each in its own process and path: SGLang imports vLLM
  # where it finds it, and vLLM's tree here has no compiled extensions.
  source verification/device/sglang-server-install.sh || exit 3
  source verification/device/vllm-install.sh || exit 3
  source verification/device/flashinfer-install.sh || exit 3
  source verification/device/flash-attn-install.sh || exit 3
  fa4="/root/fa4site:/root/fa4site/nvidia_cutlass_dsl/dsl_packages"  # from call 2, if it ran
  (PYTHONPATH="$SGLSITE:$fa4" timeout "${LIMIT:-470}" python3 -m errkb.verify run --backend sglang-server \
     --timeout 240 --out "$OUT/r-sglang-server.jsonl" --log "$OUT/w-sglang-server.log" > "$OUT/p-sglang-server.txt" 2>&1) &
  (PYTHONPATH="$VLLMSITE:$FISITE:$SGLSITE" timeout "${LIMIT:-470}" python3 -m errkb.verify run --backend vllm \
     --timeout 240 --out "$OUT/r-vllm.jsonl" --log "$OUT/w-vllm.log" > "$OUT/p-vllm.txt" 2>&1) &
  if [ -d "$FASITE/flash_attn" ]; then  # FA2/FA3 (see flash-attn-install.sh), with the kernel wheels' .py files
    (PYTHONPATH="$FASITE" ERRKB_VERIFY_LIBS="${FA_LIBS:-}" timeout "${LIMIT:-470}" python3 -m errkb.verify run --backend flash-attn \
       --timeout 240 --out "$OUT/r-flash-attn.jsonl" --log "$OUT/w-flash-attn.log" > "$OUT/p-flash-attn.txt" 2>&1) &
  fi
  wait
  grep -hv '^confirmed' "$OUT"/p-*.txt | tail -60
  exit 0
fi
xz -dc .gpu/a2/cu13-part2.tar.xz | tar -x -C /root/fa4site
source .gpu/b/device-install.sh b || exit 3
source verification/device/flashinfer-install.sh || exit 3
export PYTHONPATH="$PWD/.gpu/sgl:$PYTHONPATH"
backends=(--backend fa4 --backend flashinfer --backend flex-attention --backend sdpa --backend sglang)
for i in 0 1; do
  (timeout "${LIMIT:-470}" python3 -m errkb.verify run "${backends[@]}" --shard $i/2 --jobs 4 --timeout 240 \
     --out "$OUT/r$i.jsonl" --log "$OUT/w$i.log" > "$OUT/p$i.txt" 2>&1
   echo "shard $i rc=$? $(( $(date +%s) - start ))s" >> "$OUT/p$i.txt") &
done
wait
grep -hv '^confirmed\|^skipped' "$OUT"/p*.txt
