#!/usr/bin/env bash
# The SM90 suite on the lent H200, in three back-to-back calls (the machine keeps /root between
# calls only while warm, ~30 s):
#   call 1 (carry .gpu/a1):  mkdir -p /root/fa4site && xz -dc .gpu/a1/cu13-part1.tar.xz | tar -x -C /root/fa4site
#   call 2 (carry .gpu/a2 .gpu/b .gpu/sgl .gpu/fi):  ERRKB_COMMIT=<sha> bash verification/device/run.sh
#   call 3 (carry .gpu/sglsrv):                      ERRKB_COMMIT=<sha> bash verification/device/run.sh sglang-server
# Call 2 runs every kernel backend as two shards at once (each with one worker per backend);
# call 3 runs SGLang's server-level checks with SGLang's whole Python tree on the path, which must
# not shadow the FA4 wrapper files (and their shims) that call 2's sglang cases use. Result lines
# land in $OUT/r*.jsonl; then, here: errkb verify merge <files>.
set -u
export PYTHONUNBUFFERED=1
start=$(date +%s)
if [ "${1:-}" = "sglang-server" ]; then
  source verification/device/sglang-server-install.sh || exit 3
  # the FA4 stack from call 2 (still on the warm machine) serves the steps that run SGLang's vendored FA4
  PYTHONPATH="$SGLSITE:/root/fa4site:/root/fa4site/nvidia_cutlass_dsl/dsl_packages" timeout "${LIMIT:-470}" python3 -m errkb.verify run --backend sglang-server --timeout 240 \
    --out "$OUT/r-sglang-server.jsonl" --log "$OUT/w-sglang-server.log" 2>&1 | tail -25
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
grep -hv '^confirmed\|^skipped' "$OUT/p0.txt" "$OUT/p1.txt"
