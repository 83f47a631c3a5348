#!/usr/bin/env bash
# Entry-point steps (entry_<kind>) on the lent H200, one project per call, so each call carries only
# what that project's launch path imports (docs/verification.md, "Entry-point steps on the H200").
#
# Here, after `make gpu-payload` (which leaves .gpu/build/*.tar.xz and the wheels in .gpu-cache/):
#   bash verification/device/entry.sh prep              # lays out .gpu/entry-sglang and .gpu/entry-vllm
#   bash verification/device/entry.sh rehearse sglang   # the same steps on this CPU machine (below)
#   bash verification/device/entry.sh rehearse vllm
# There (only once both rehearsals give every step a verdict):
#   run(carry=[".gpu/entry-sglang"], command="ERRKB_COMMIT=<sha> bash verification/device/entry.sh run sglang")
#   run(carry=[".gpu/entry-vllm"],   command="ERRKB_COMMIT=<sha> bash verification/device/entry.sh run vllm")
# Results: $OUT/r-entry-<project>.jsonl; then, here, errkb verify merge.
#
# `rehearse` runs what `run` runs, from the same folder, in a Python 3.12 virtual environment that
# holds only what the H200 image has of the launch paths' imports (verification/device/
# h200-image.txt: torch 2.11.0, transformers 5.17.0, ...; made once in .gpu/rehearse-py312, or
# ERRKB_REHEARSE_PYTHON), with ERRKB_PRETEND_CUDA=9.0 so torch and vLLM's platform detection answer
# as on the H200 (errkb.verify.pretend). Its results (.gpu/rehearse/r-entry-<project>.jsonl) are
# never GPU results, and merge refuses them. It exits 1 when a step ends without a verdict.
#
# The vLLM engine path imports small packages the claim steps never needed and the image lacks;
# `prep` fetches them by pinned version (ENTRY_EXTRA) for CPython 3.12 on manylinux x86_64. (What
# the image has, cloudpickle, uvloop, py-cpuinfo, prometheus_client, einops among them, is not
# carried: h200-image.txt pins the rehearsal's copies.)
set -euo pipefail
ENTRY_EXTRA=(pyzmq==27.3.0 msgspec==0.23.0 blake3==1.0.11 setproctitle==1.3.8 pybase64==1.5.1
  python-json-logger==4.2.0 orjson==3.13.0 ijson==3.6.0)
# Wheels of the SGLang payload that vLLM's engine path imports too: pydantic (vLLM's config classes,
# openai_harmony) and apache-tvm-ffi (xgrammar imports tvm_ffi at its top: without it the five
# steps that need xgrammar were skipped on the H200).
VLLM_FROM_SGLANG='^(pydantic|pydantic_core|annotated_types|typing_inspection|apache_tvm_ffi|starlette)-'
KERNEL_PY=sgl-kernel-py.tar.xz  # sgl_kernel's .py files: unpacked beside the site, off the import path
# FlashInfer's payload (Python files, headers) for vLLM: `--attention-backend FLASHINFER` imports it,
# and vllm-selected-backend-head-size's step needs it. Unpacked into the site.
FLASHINFER=flashinfer.tar.xz

wheels_of() {  # PAYLOAD: the lock's wheel files for that payload
  python3 - "$1" <<'EOF'
import json, sys
lock = json.load(open("verification/device/payload.lock.json"))
for f in lock["files"]:
    if f.get("payloads", {}).get(sys.argv[1]) == "wheel":
        print(f["file"])
EOF
}

site_payload() { [ "$1" = sglang ] && echo sglang-server || echo vllm; }

prep() {
  for p in sglang vllm; do
    site=$(site_payload $p)
    dir=.gpu/entry-$p
    rm -rf "$dir" && mkdir -p "$dir/wheels"
    [ -f ".gpu/build/$site.tar.xz" ] || { echo "missing .gpu/build/$site.tar.xz: run make gpu-payload first" >&2; exit 3; }
    cp ".gpu/build/$site.tar.xz" "$dir/"
    if [ $p = sglang ]; then
      # The launch imports sgl_kernel; its compiled modules cannot load beside the H200's torch, so
      # the cases use the wheel's Python files (ERRKB_SGL_KERNEL_PY) with stand-ins for the rest.
      [ -f ".gpu/build/$KERNEL_PY" ] || { echo "missing .gpu/build/$KERNEL_PY: run make gpu-payload first" >&2; exit 3; }
      cp ".gpu/build/$KERNEL_PY" "$dir/"
    fi
    wheels_of "$site" | while read -r w; do cp ".gpu-cache/$w" "$dir/wheels/"; done
    if [ $p = vllm ]; then
      wheels_of sglang-server | grep -E "$VLLM_FROM_SGLANG" | while read -r w; do cp ".gpu-cache/$w" "$dir/wheels/"; done
      [ -f ".gpu/build/$FLASHINFER" ] || { echo "missing .gpu/build/$FLASHINFER: run make gpu-payload first" >&2; exit 3; }
      cp ".gpu/build/$FLASHINFER" "$dir/"
    fi
  done
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    -d .gpu/entry-vllm/wheels "${ENTRY_EXTRA[@]}"
  # The wheels' files in one xz archive: a third smaller than the zipped wheels (vLLM's call
  # carries 50 MiB otherwise, beside a 12 MiB tree, against the 64 MiB limit).
  for p in sglang vllm; do
    dir=.gpu/entry-$p
    rm -rf "$dir/unpacked" && mkdir "$dir/unpacked"
    for w in "$dir"/wheels/*.whl; do python3 -m zipfile -e "$w" "$dir/unpacked"; done
    ls "$dir/wheels" > "$dir/WHEELS"
    tar -C "$dir/unpacked" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - . | xz -6 -T0 > "$dir/wheels.tar.xz"
    rm -rf "$dir/unpacked" "$dir/wheels"
  done
  # A call carries at most 64 MiB with the working tree (~12 MiB): each folder must stay under 50.
  for p in sglang vllm; do
    mib=$(( $(du -sb .gpu/entry-$p | cut -f1) / 1048576 ))
    echo ".gpu/entry-$p: $mib MiB"
    [ "$mib" -lt 50 ] || { echo "entry.sh: .gpu/entry-$p is $mib MiB, over the 50 MiB a call can carry beside the tree" >&2; exit 3; }
  done
}

install_entry() {  # PROJECT SITE: unpack .gpu/entry-PROJECT into SITE (and SITE.sglkpy)
  local dir=.gpu/entry-$1 site=$2 main=$(site_payload "$1").tar.xz
  [ -f "$dir/$main" ] || { echo "entry.sh: $dir/$main not carried (run entry.sh prep here, carry $dir)" >&2; exit 3; }
  rm -rf "$site" "$site.sglkpy" && mkdir -p "$site"
  tar -xJf "$dir/$main" -C "$site" || { echo "entry.sh: cannot unpack $dir/$main" >&2; exit 3; }
  if [ "$1" = vllm ]; then
    [ -f "$dir/$FLASHINFER" ] || { echo "entry.sh: $dir/$FLASHINFER not carried (run entry.sh prep again)" >&2; exit 3; }
    tar -xJf "$dir/$FLASHINFER" -C "$site" || { echo "entry.sh: cannot unpack $dir/$FLASHINFER" >&2; exit 3; }
  fi
  if [ "$1" = sglang ]; then
    [ -f "$dir/$KERNEL_PY" ] || { echo "entry.sh: $dir/$KERNEL_PY not carried (run entry.sh prep again)" >&2; exit 3; }
    mkdir -p "$site.sglkpy"
    tar -xJf "$dir/$KERNEL_PY" -C "$site.sglkpy" || { echo "entry.sh: cannot unpack $dir/$KERNEL_PY" >&2; exit 3; }
  fi
  [ -f "$dir/wheels.tar.xz" ] || { echo "entry.sh: $dir/wheels.tar.xz not carried (run entry.sh prep again)" >&2; exit 3; }
  tar -xJf "$dir/wheels.tar.xz" -C "$site" || { echo "entry.sh: cannot unpack $dir/wheels.tar.xz" >&2; exit 3; }
}

run_steps() {  # PROJECT SITE PYTHON OUTDIR
  local project=$1 site=$2 py=$3 out=$4 backend
  backend=$([ "$project" = sglang ] && echo sglang-server || echo vllm)
  mkdir -p "$out"
  # Each entry step runs in a worker process of its own (runner.worker_group): four at a time.
  PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 ERRKB_SGL_KERNEL_PY="$site.sglkpy" PYTHONPATH="$site" \
    timeout "${LIMIT:-400}" "$py" -m errkb.verify run --backend "$backend" --step 'entry-*' --jobs "${JOBS:-4}" \
    --timeout 240 --out "$out/r-entry-$project.jsonl" --log "$out/w-entry-$project.log" 2>&1 | tail -40 \
    || echo "entry.sh: the runner exited with status $? (see $out/w-entry-$project.log)" >&2
}

find_py312() {
  local c
  for c in "${PYTHON312:-}" python3.12 /root/.pyenv/versions/3.12*/bin/python3.12 /usr/bin/python3.12; do
    [ -n "$c" ] && "$c" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null && { echo "$c"; return; }
  done
  echo "entry.sh: no Python 3.12 here (set PYTHON312=/path/to/python3.12)" >&2; exit 3
}

rehearsal_python() {  # the image-like environment, made once
  if [ -n "${ERRKB_REHEARSE_PYTHON:-}" ]; then echo "$ERRKB_REHEARSE_PYTHON"; return; fi
  local venv=.gpu/rehearse-py312 pins=verification/device/h200-image.txt
  if [ ! -f "$venv/.pins" ] || ! cmp -s "$pins" "$venv/.pins"; then
    rm -rf "$venv"
    "$(find_py312)" -m venv "$venv" >&2
    "$venv/bin/python" -m pip install -q --no-deps --only-binary=:all: -r "$pins" >&2
    cp "$pins" "$venv/.pins"
  fi
  echo "$venv/bin/python"
}

case "${1:-}" in
  prep) prep ;;
  run)
    project=${2:?usage: entry.sh run sglang|vllm}
    install_entry "$project" "/root/entry-$project"
    run_steps "$project" "/root/entry-$project" python3 "$OUT"
    python3 verification/device/entry_summary.py "$OUT/r-entry-$project.jsonl" || true ;;
  rehearse)
    project=${2:?usage: entry.sh rehearse sglang|vllm}
    py=$(rehearsal_python)
    out=.gpu/rehearse
    install_entry "$project" "$out/site-$project"
    rm -f "$out/r-entry-$project.jsonl" "$out/w-entry-$project.log"
    ERRKB_PRETEND_CUDA=9.0 run_steps "$project" "$(pwd)/$out/site-$project" "$py" "$out"
    python3 verification/device/entry_summary.py "$out/r-entry-$project.jsonl" ;;
  *) echo "usage: entry.sh prep | rehearse sglang|vllm | run sglang|vllm" >&2; exit 2 ;;
esac
