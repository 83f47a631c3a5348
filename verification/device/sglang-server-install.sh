# Source on the lent GPU (carry .gpu/sglsrv): unpacks SGLang 0.5.23's Python tree and the small
# wheels it imports into /root/sglsite. Kept apart from .gpu/sgl (the FA4 wrapper files with their
# two shims), so the sglang-server cases run in a process of their own with this tree on the path.
SGLSITE=${SGLSITE:-/root/sglsite}
mkdir -p "$SGLSITE"
[ -d "$SGLSITE/sglang" ] || xz -dc .gpu/sglsrv/sglang-*.tar.xz | tar -x -C "$SGLSITE"
for w in .gpu/sglsrv/whl/*.whl; do python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$w" "$SGLSITE"; done
