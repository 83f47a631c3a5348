#!/usr/bin/env bash
# Entry-point steps (entry_<kind>) on the lent H200, one project per call, so each call carries only
# what that project's launch path imports (docs/verification.md, "Entry-point steps on the H200").
#
# Here, after `make gpu-payload` (which leaves .gpu/build/*.tar.xz and the wheels in .gpu-cache/):
#   bash verification/device/entry.sh prep          # lays out .gpu/entry-sglang and .gpu/entry-vllm
# There:
#   run(carry=[".gpu/entry-sglang"], command="ERRKB_COMMIT=<sha> bash verification/device/entry.sh run sglang")
#   run(carry=[".gpu/entry-vllm"],   command="ERRKB_COMMIT=<sha> bash verification/device/entry.sh run vllm")
# Results: $OUT/r-entry-<project>.jsonl; then, here, errkb verify merge.
#
# The vLLM engine path imports small packages the claim steps never needed; `prep` fetches
# them by pinned version (ENTRY_EXTRA) for CPython 3.12 on manylinux x86_64.
set -euo pipefail
ENTRY_EXTRA=(cloudpickle==3.1.3 uvloop==0.23.0 py-cpuinfo==9.0.0 prometheus_client==0.26.0 einops==0.8.2
  pyzmq==27.3.0 msgspec==0.23.0 blake3==1.0.11 setproctitle==1.3.8 pybase64==1.5.1 python-json-logger==4.2.0
  orjson==3.13.0 ijson==3.6.0)

wheels_of() {  # PAYLOAD: the lock's wheel files for that payload
  python3 - "$1" <<'EOF'
import json, sys
lock = json.load(open("verification/device/payload.lock.json"))
for f in lock["files"]:
    if f.get("payloads", {}).get(sys.argv[1]) == "wheel":
        print(f["file"])
EOF
}

if [ "${1:-}" = "prep" ]; then
  for p in sglang vllm; do
    site=$([ $p = sglang ] && echo sglang-server || echo vllm)
    dir=.gpu/entry-$p
    rm -rf "$dir" && mkdir -p "$dir/wheels"
    [ -f ".gpu/build/$site.tar.xz" ] || { echo "missing .gpu/build/$site.tar.xz: run make gpu-payload first" >&2; exit 3; }
    cp ".gpu/build/$site.tar.xz" "$dir/"
    wheels_of "$site" | while read -r w; do cp ".gpu-cache/$w" "$dir/wheels/"; done
    # In call 4 vLLM finds pydantic in SGLang's payload; the vLLM engine path alone needs it too
    # (openai_harmony, vLLM's config classes).
    if [ $p = vllm ]; then
      wheels_of sglang-server | grep -E '^(pydantic|pydantic_core|annotated_types|typing_inspection)-' |
        while read -r w; do cp ".gpu-cache/$w" "$dir/wheels/"; done
    fi
  done
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    -d .gpu/entry-vllm/wheels "${ENTRY_EXTRA[@]}"
  du -sh .gpu/entry-*
  exit 0
fi

[ "${1:-}" = "run" ] || { echo "usage: entry.sh prep | run sglang|vllm" >&2; exit 2; }
project=$2
site=/root/entry-$project
dir=.gpu/entry-$project
archive=$(ls "$dir"/*.tar.xz 2>/dev/null | head -1)
[ -n "$archive" ] || { echo "entry.sh: $dir/*.tar.xz not carried" >&2; exit 3; }
mkdir -p "$site"
tar -xJf "$archive" -C "$site" || { echo "entry.sh: cannot unpack $archive" >&2; exit 3; }
for w in "$dir"/wheels/*.whl; do
  python3 -m zipfile -e "$w" "$site" || { echo "entry.sh: cannot unpack $w" >&2; exit 3; }
done
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
backend=$([ "$project" = sglang ] && echo sglang-server || echo vllm)
PYTHONPATH="$site" timeout "${LIMIT:-270}" python3 -m errkb.verify run --backend "$backend" --step 'entry-*' \
  --timeout 200 --out "$OUT/r-entry-$project.jsonl" --log "$OUT/w-entry-$project.log" 2>&1 | tail -40
