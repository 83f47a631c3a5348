# Source on the lent GPU (carry .gpu/fa): unpacks the FlashAttention-2 and FlashAttention-3 builds
# for the device's torch (flash_attn + flash_attn_2_cuda, flash_attn_interface + flash_attn_3._C)
# into /root/fasite (FASITE). It is not put on PYTHONPATH here: FA2's `flash_attn` package would
# shadow flash-attn-4's `flash_attn.cute`, so run.sh (call 3) gives FASITE to the flash-attn runner only.
# errkb does not build them: .gpu/fa/fa.tar.xz is
# whatever build you provide, and .gpu/fa/BUILD (one line: "name=version (what it has),...")
# is recorded in the flash-attn results' environment, so a reduced build says so next to its verdicts.
FASITE=${FASITE:-/root/fasite}
if [ -f .gpu/fa/fa.tar.xz ]; then
  mkdir -p "$FASITE"
  [ -d "$FASITE/flash_attn" ] || xz -dc .gpu/fa/fa.tar.xz | tar -x -C "$FASITE"
  FA_LIBS=$(cat .gpu/fa/BUILD 2>/dev/null)  # for the flash-attn runner's ERRKB_VERIFY_LIBS
fi
