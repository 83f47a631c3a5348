# Source on the lent GPU: unpacks the packed flashinfer-python and its one missing dependency
# (apache-tvm-ffi) from .gpu/fi into /root/fisite and puts it on PYTHONPATH. The machine's image has
# the rest (nvcc 13, ninja, numpy, einops, ...); FlashInfer JIT-compiles its kernels there.
# Call 2 carries .gpu/fi; call 3 reuses what call 2 unpacked (the machine keeps /root while warm),
# which leaves call 3 room for SGLang's and vLLM's trees.
FISITE=${FISITE:-/root/fisite}
mkdir -p "$FISITE"
if [ ! -d "$FISITE/flashinfer" ]; then
  [ -d .gpu/fi ] || { echo "no $FISITE/flashinfer and no .gpu/fi carried" >&2; return 3; }
  xz -dc .gpu/fi/flashinfer-*.tar.xz | tar -x -C "$FISITE"
  for w in .gpu/fi/*.whl; do python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$w" "$FISITE"; done
fi
export PYTHONPATH="$FISITE${PYTHONPATH:+:$PYTHONPATH}"
