# Sourced by run.sh (call 4) on the lent GPU when .gpu/fa is carried: unpacks the FlashAttention-2
# and FlashAttention-3 builds for the device's torch (flash_attn + flash_attn_2_cuda,
# flash_attn_interface + flash_attn_3._C) into /root/fasite (FASITE) and sets FA_LIBS. It is not
# put on PYTHONPATH here: FA2's `flash_attn` package would shadow flash-attn-4's `flash_attn.cute`,
# so run.sh gives FASITE to the flash-attn runner only.
# payload.lock.json does not pin them: .gpu/fa/fa.tar.xz is whatever build you provide (FA2's from
# fa2-build.sh, run on the GPU; FA3 has no recipe here yet), and .gpu/fa/BUILD (one line:
# "name=version (what it has),...") is recorded in the flash-attn results' environment, so a
# reduced build says so next to its verdicts.
# Without .gpu/fa the flash-attn cases do not run; a .gpu/fa that is there but incomplete stops run.sh.
FASITE=${FASITE:-/root/fasite}
if [ -e .gpu/fa ]; then
  [ -f .gpu/fa/fa.tar.xz ] && [ -s .gpu/fa/BUILD ] \
    || { echo "flash-attn-install.sh: .gpu/fa needs fa.tar.xz and a one-line BUILD" >&2; return 3; }
  if [ ! -f "$FASITE/.errkb-unpacked" ]; then
    rm -rf "$FASITE" && mkdir -p "$FASITE" && tar -xJf .gpu/fa/fa.tar.xz -C "$FASITE" \
      || { echo "flash-attn-install.sh: unpacking .gpu/fa/fa.tar.xz into $FASITE failed" >&2; return 3; }
    touch "$FASITE/.errkb-unpacked"
  fi
  FA_LIBS=$(cat .gpu/fa/BUILD)
fi
