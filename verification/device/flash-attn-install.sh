# Sourced by run.sh (call 4) on the lent GPU: unpacks the FlashAttention-2 build (.gpu/fa: fa.tar.xz,
# flash_attn + flash_attn_2_cuda) and the FlashAttention-3 build (.gpu/fa3: fa3.tar.xz,
# flash_attn_interface + flash_attn_3._C), whichever are carried, side by side into /root/fasite
# (FASITE), and sets FA_LIBS to their BUILD lines joined by commas. It is not put on PYTHONPATH here:
# FA2's `flash_attn` package would shadow flash-attn-4's `flash_attn.cute`, so run.sh gives FASITE to
# the flash-attn runner only.
# payload.lock.json does not pin them: each is the output of its recipe, run on the GPU
# (fa2-build.sh -> $OUT/fa, fa3-build.sh -> $OUT/fa3), and its BUILD (one line, "name=version (what
# it has)", no commas) is recorded in the flash-attn results' environment, so a reduced build says so
# next to its verdicts.
# .gpu/fa-sm80 (FA2 built for sm_80 only: FA2_ARCH=80 fa2-build.sh) goes to a site of its own,
# ERRKB_FA2_SM80_SITE, which fa2-no-kernel-image's case imports in a child process.
# With neither folder the flash-attn cases do not run; with FA2 alone the FA3 cases are skipped
# (flash_attn_interface not importable); a folder that is there but incomplete stops run.sh.
FASITE=${FASITE:-/root/fasite}
FA_LIBS=
_fa_archives=
for _fa in fa/fa.tar.xz fa3/fa3.tar.xz fa-sm80/fa.tar.xz; do
  _fa_dir=.gpu/${_fa%%/*}
  [ -e "$_fa_dir" ] || continue
  [ -f ".gpu/$_fa" ] && [ -s "$_fa_dir/BUILD" ] \
    || { echo "flash-attn-install.sh: $_fa_dir needs ${_fa#*/} and a one-line BUILD" >&2; return 3; }
  _fa_line=$(head -1 "$_fa_dir/BUILD")
  case $_fa_line in
    *,*|"") echo "flash-attn-install.sh: $_fa_dir/BUILD must be one line without commas" >&2; return 3 ;;
  esac
  FA_LIBS=${FA_LIBS:+$FA_LIBS,}$_fa_line
  if [ "$_fa_dir" = .gpu/fa-sm80 ]; then  # FA2 for another arch: a site of its own, for fa2-no-kernel-image
    export ERRKB_FA2_SM80_SITE=${FASITE}-sm80
    if [ "$(cat "$ERRKB_FA2_SM80_SITE/.errkb-unpacked" 2>/dev/null)" != "$(sha256sum ".gpu/$_fa" | cut -c1-64)" ]; then
      rm -rf "$ERRKB_FA2_SM80_SITE" && mkdir -p "$ERRKB_FA2_SM80_SITE" && tar -xJf ".gpu/$_fa" -C "$ERRKB_FA2_SM80_SITE" \
        || { echo "flash-attn-install.sh: unpacking .gpu/$_fa failed" >&2; return 3; }
      sha256sum ".gpu/$_fa" | cut -c1-64 > "$ERRKB_FA2_SM80_SITE/.errkb-unpacked"
    fi
    continue
  fi
  _fa_archives="$_fa_archives .gpu/$_fa"
done
if [ -n "$_fa_archives" ]; then
  # shellcheck disable=SC2086  # the archive paths have no spaces
  _fa_stamp=$(sha256sum $_fa_archives | cut -c1-64 | tr '\n' ' ')
  if [ "$(cat "$FASITE/.errkb-unpacked" 2>/dev/null)" != "$_fa_stamp" ]; then
    rm -rf "$FASITE" && mkdir -p "$FASITE" || { echo "flash-attn-install.sh: cannot make $FASITE" >&2; return 3; }
    for _fa in $_fa_archives; do
      tar -xJf "$_fa" -C "$FASITE" || { echo "flash-attn-install.sh: unpacking $_fa into $FASITE failed" >&2; return 3; }
    done
    echo "$_fa_stamp" > "$FASITE/.errkb-unpacked"
  fi
fi
