#!/usr/bin/env bash
# Call 2 on the lent H200 (carry .gpu/a2 .gpu/b .gpu/sgl .gpu/fi), right after call 1 (carry .gpu/a1):
#   call 1: mkdir -p /root/fa4site && xz -dc .gpu/a1/cu13-part1.tar.xz | tar -x -C /root/fa4site
#   call 2: ERRKB_COMMIT=<sha> bash verification/device/run.sh
# Runs the whole suite as two shards at once (each with one worker per backend) and leaves the
# result lines in $OUT/r0.jsonl and $OUT/r1.jsonl; then, here: errkb verify merge <files>.
set -u
xz -dc .gpu/a2/cu13-part2.tar.xz | tar -x -C /root/fa4site
source .gpu/b/device-install.sh b || exit 3
source verification/device/flashinfer-install.sh || exit 3
export PYTHONPATH="$PWD/.gpu/sgl:$PYTHONPATH" PYTHONUNBUFFERED=1
start=$(date +%s)
for i in 0 1; do
  (timeout "${LIMIT:-470}" python3 -m errkb.verify run --shard $i/2 --jobs 4 --timeout 240 \
     --out "$OUT/r$i.jsonl" --log "$OUT/w$i.log" > "$OUT/p$i.txt" 2>&1
   echo "shard $i rc=$? $(( $(date +%s) - start ))s" >> "$OUT/p$i.txt") &
done
wait
grep -hv '^confirmed\|^skipped' "$OUT/p0.txt" "$OUT/p1.txt"
