# Source on the lent GPU (carry .gpu/vllm): unpacks vLLM 0.33.0's Python tree (from its sdist; no
# compiled extensions exist for this machine's torch) and the few wheels its config code imports.
VLLMSITE=${VLLMSITE:-/root/vllmsite}
mkdir -p "$VLLMSITE"
[ -d "$VLLMSITE/vllm" ] || xz -dc .gpu/vllm/vllm-*.tar.xz | tar -x -C "$VLLMSITE"
for w in .gpu/vllm/whl/*.whl; do python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$w" "$VLLMSITE"; done
