"""FlashInfer 0.5.3's JIT: "Command '['ninja', '-v', '-C', ...]' returned non-zero exit status 1." when a
kernel module does not compile.

flashinfer-python 0.5.3 (the release the record quotes) JIT-builds its sampling module with this machine's
CUDA 13.0 toolkit, which has no cuRAND headers (verification/cases/_flashinfer_sampling.py). Reproduce: the
subprocess.CalledProcessError for FlashInfer's ninja command (-v -C <cache>/cached_ops -f
<module>/build.ninja), printed above the RuntimeError FlashInfer re-raises ("Ninja build failed."; noted).
Fix 1: the same build with FLASHINFER_JIT_VERBOSE=1 read with the fix's grep (-m 10 -E
'error|fatal|FAILED'): the lines include the compiler's fatal error. Fix 2 needs a second toolkit, fix 3
flashinfer.ai's index, fix 4 vLLM: not run."""

from verification.cases import _flashinfer_sampling as fs
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
VERSION = "0.5.3"


def reproduce(ctx):
    res = fs.build(ctx, VERSION)
    ctx.note("exceptions printed: " + " / ".join(f"{c}: {m[:80]}" for c, m in _venv.exception_lines(res.output)[-3:]))
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"], "CalledProcessError")


def fix_1(ctx):
    fs.verbose_names_the_cause(ctx, VERSION, r"error|fatal|FAILED", failed_line=False)


def fix_2(ctx):
    ctx.skip("needs a second CUDA toolkit (12.9) for CUDA_HOME")


def fix_3(ctx):
    ctx.skip("flashinfer-jit-cache comes from flashinfer.ai's index, out of reach here")


def fix_4(ctx):
    ctx.skip("vLLM's --attention-backend: a server launch, not run here")
