"""A caller newer than the installed FlashInfer: "trtllm_batch_decode_sparse_mla_dsv4() got an unexpected
keyword argument 'swa_topk_lens'".

flashinfer-python 0.6.13 and 0.6.14 (PyPI wheels, `--no-deps`, next to torch 2.13.0+cpu:
_flashinfer_jit.py). Python binds a call's arguments before the function body runs, so the TypeError
comes before any kernel or device is touched and this machine (no GPU) meets it as a B200 would.

Reproduce: on 0.6.13, `flashinfer.mla.trtllm_batch_decode_sparse_mla_dsv4` called with small CPU tensors
for its seven required arguments and the three keywords vLLM's DeepSeek-V4 sparse decode passes
(swa_topk_lens, extra_sparse_indices, extra_sparse_topk_lens, in that order) raises the record's TypeError
naming the first. Fix 1: the fix's check command runs on 0.6.14 and its signature lists the three keywords;
the same arguments bind to 0.6.14's signature (the call itself would run the SM100 kernel, not run here);
the note says whether flashinfer-cubin 0.6.14 is on PyPI (the fix's caveat: it is not). Fix 2 (a caller
release whose pin matches) names no release: skipped."""

from verification.cases import _builds as b
from verification.cases import _flashinfer_jit as fi
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
OLD, NEW = "0.6.13", "0.6.14"
ARGS = """
import torch, inspect, flashinfer
print('versions', flashinfer.__version__, torch.__version__)
from flashinfer.mla import trtllm_batch_decode_sparse_mla_dsv4 as f
t = lambda *s, dtype=torch.bfloat16: torch.zeros(*s, dtype=dtype)
required = dict(query=t(1, 1, 8, 512), swa_kv_cache=t(1, 128, 512), workspace_buffer=t(1024, dtype=torch.uint8),
                sparse_indices=t(1, 1, 256, dtype=torch.int32), compressed_kv_cache=t(1, 64, 512),
                sparse_topk_lens=t(1, 1, dtype=torch.int32), seq_lens=t(1, dtype=torch.int32))
extra = dict(swa_topk_lens=t(1, 1, dtype=torch.int32), extra_sparse_indices=t(1, 1, 0, dtype=torch.int32),
             extra_sparse_topk_lens=t(1, 1, dtype=torch.int32))
"""
CALL = ARGS + "f(**required, **extra)\nprint('returned')\n"
CHECK_COMMAND = ("import flashinfer, inspect; from flashinfer.mla import trtllm_batch_decode_sparse_mla_dsv4 as f; "
                 "print(flashinfer.__version__, inspect.signature(f))")
BIND = ARGS + "inspect.signature(f).bind(**required, **extra)\nprint('bound', sorted(extra))\n"


def reproduce(ctx):
    res = fi.run(ctx, OLD, CALL)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    env, path = fi.site(ctx, NEW)
    shown = b.run_with_torch(ctx, CHECK_COMMAND, env=env, path=path)
    sig = (shown.output.strip().splitlines() or [""])[-1]
    ctx.note(f"the fix's check command printed: {sig[:160]} ... {sig[-140:]}")
    bound = fi.run(ctx, NEW, BIND)

    def has_the_keywords():
        _venv.reraise(shown.output)
        if not sig.startswith(NEW + " ") or any(k not in sig for k in ("swa_topk_lens", "extra_sparse_indices",
                                                                         "extra_sparse_topk_lens")):
            raise AssertionError(f"the signature lacks the keywords: {sig[:400]}")
        _venv.finished(bound, "bound", "binding the caller's arguments")

    ctx.call(has_the_keywords)
    got = env.pip("index", "versions", "flashinfer-cubin", timeout=120)
    listed = next((ln for ln in got.output.splitlines() if ln.startswith("Available versions")), "")
    ctx.note(f"flashinfer-cubin {NEW} on PyPI: {'yes' if NEW in listed.split(': ', 1)[-1].split(', ') else 'no'} "
             f"(newest listed: {listed.split(': ', 1)[-1].split(', ')[0] if listed else 'none'})")


def fix_2(ctx):
    ctx.skip("names no caller release (the record: which vLLM release first pins a matching FlashInfer was not checked)")
