"""uv 0.5.x reports a failed PEP 517 build as 'Build backend failed to build wheel through `<hook>`'.

Reproduce: uv 0.5.9 (the last release of the range the record names), `uv pip install
--no-build-isolation flash-attn==2.8.3` into an environment with torch (PyPI's 2.14.1), with
FLASH_ATTENTION_FORCE_BUILD=TRUE (the record's flag: no wheel download, straight to the compile),
MAX_JOBS=1 and NVCC_PREPEND_FLAGS set to an option nvcc does not have, so that setup.py's build fails
within minutes instead of compiling for hours (any failure of setup.py's build is the record's
trigger). uv 0.5.9 prints the line as 'through `build_wheel` (exit status: 1)'. The isolated install
without torch is noted too: there setup.py fails in the get_requires hook and uv 0.5.9 says 'Build
backend failed to determine requirements with `build_wheel()`', a sibling line this template does
not match. Fix 1 as written: the fix's grep pattern finds the first errors in the output uv appended.
Fix 2 needs flash-attn's GitHub release wheels; fix 3 is a full CUDA compile."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
UV = "0.5.9"
GREP = r"Error|error:|FAILED:|Killed|No module named"  # fix 1's grep -E pattern


def _failed_build(ctx):
    key = ("uv-force-build", UV)
    env = b.with_torch(ctx)
    tool = _venv.venv(ctx, f"uv-{UV}-tool", install=[f"uv=={UV}"])
    if key not in b._runs:
        b._runs[key] = _venv.run([tool.bin("uv"), "pip", "install", "--python", env.python, "--no-build-isolation",
                                  b.FLASH_ATTN],
                                 env=_venv.tool_env(FLASH_ATTENTION_FORCE_BUILD="TRUE", MAX_JOBS="1",
                                                    NVCC_PREPEND_FLAGS="--errkb-no-such-option"), timeout=1200)
    res = b._runs[key]
    ctx.note(f"uv {UV} " + res.summary() + " (FLASH_ATTENTION_FORCE_BUILD=TRUE MAX_JOBS=1, nvcc given an unknown option)")
    return res


def reproduce(ctx):
    isolated = b.uv_install(ctx, b.FLASH_ATTN, uv=UV)
    line = re.search(r"Build backend failed[^\n]*", isolated.output)
    ctx.note("isolated, no torch: " + (line.group(0) if line else isolated.tail(200)))
    res = _failed_build(ctx)
    ctx.expect_error(_venv.raise_tool_message, "uv", res.output, ctx.record["template"])


def fix_1(ctx):
    res = _failed_build(ctx)
    body = res.output.split("[stderr]", 1)[-1] if "[stderr]" in res.output else res.output.split("[stdout]", 1)[-1]

    def grep_finds():
        hits = [l.strip() for l in body.splitlines() if re.search(GREP, l)]
        if not hits:
            raise AssertionError(f"the fix's grep finds nothing in uv's output: {res.tail(600)}")
        ctx.note(f"{len(hits)} lines match the fix's grep; the first: {hits[0][:200]}")

    ctx.call(grep_finds)


def fix_2(ctx):
    ctx.skip("needs flash-attn's GitHub release wheels: only PyPI is reachable from this machine")


def fix_3(ctx):
    ctx.skip("compiles flash-attn's CUDA kernels (hours on this machine)")
