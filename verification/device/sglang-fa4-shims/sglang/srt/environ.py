"""errkb shim for sglang.srt.environ: no persistent CuTe compile cache (an in-memory one).

The vendored FA4 reads only where a persistent compile cache lives; these shims answer exactly
that, so the kernels under test stay upstream's own code.
"""


class _Unset:
    def get(self):
        return None


class _Envs:
    SGLANG_CUTE_AOT_CACHE_DIR = _Unset()


envs = _Envs()
