# Source on the lent GPU (carry .gpu/fi): unpacks the packed flashinfer-python and its one missing
# dependency (apache-tvm-ffi) into /root/fisite and puts it on PYTHONPATH. The machine's image has
# the rest (nvcc 13, ninja, numpy, einops, ...); FlashInfer JIT-compiles its kernels there.
FISITE=${FISITE:-/root/fisite}
mkdir -p "$FISITE"
[ -d "$FISITE/flashinfer" ] || xz -dc .gpu/fi/flashinfer-*.tar.xz | tar -x -C "$FISITE"
for w in .gpu/fi/*.whl; do python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$w" "$FISITE"; done
export PYTHONPATH="$FISITE${PYTHONPATH:+:$PYTHONPATH}"
