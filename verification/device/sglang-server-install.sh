# Source on the lent GPU (carry .gpu/sglsrv): unpacks SGLang 0.5.23's Python tree and the small
# wheels it imports into /root/sglsite. Kept apart from .gpu/sgl (the FA4 wrapper files with their
# two shims), so the sglang-server cases run in a process of their own with this tree on the path.
# SGLang's attention backends import tvm_ffi: the apache-tvm-ffi that call 2 unpacked for FlashInfer
# into /root/fisite (from .gpu/fi) is copied here, without FlashInfer itself.
# The Python files of the sgl-kernel 0.3.21 and sglang-kernel 0.4.10 wheels (no compiled modules)
# go to /root/sglkpy, off the import path: the cases on sgl_kernel/flash_attn.py find them through
# ERRKB_SGL_KERNEL_PY (verification/cases/sglang/_sglk.py).
SGLSITE=${SGLSITE:-/root/sglsite}
mkdir -p "$SGLSITE"
[ -d "$SGLSITE/sglang" ] || xz -dc .gpu/sglsrv/sglang-*.tar.xz | tar -x -C "$SGLSITE"
for w in .gpu/sglsrv/whl/*.whl .gpu/fi/apache_tvm_ffi-*.whl; do [ -f "$w" ] || continue; python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$w" "$SGLSITE"; done
[ -d "$SGLSITE/tvm_ffi" ] || cp -r "${FISITE:-/root/fisite}"/tvm_ffi "${FISITE:-/root/fisite}"/apache_tvm_ffi-*.dist-info "$SGLSITE"/ || return 3
export ERRKB_SGL_KERNEL_PY=${ERRKB_SGL_KERNEL_PY:-/root/sglkpy}
mkdir -p "$ERRKB_SGL_KERNEL_PY"
[ -d "$ERRKB_SGL_KERNEL_PY/sglang_kernel-0.4.10" ] || xz -dc .gpu/sglsrv/sgl-kernel-py.tar.xz | tar -x -C "$ERRKB_SGL_KERNEL_PY"
