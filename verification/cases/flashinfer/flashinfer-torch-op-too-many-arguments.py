"""SGLang 0.4.6.post1's decode plan under FlashInfer 0.2.5: torch's binder refuses the call with
"<module>::plan() expected at most 15 argument(s) but received 16 argument(s). Declaration: ...".

On the CPU (verification/cases/flashinfer/_fi02.py, sglang_plan): FlashInfer's decode module for fp16, head dim 128 is
JIT-compiled from the PyPI sdist of the release named (nvcc 13.0, sm_90, torch 2.11.0+cu130) and its
`plan` op loaded; the binder counts arguments before anything is dispatched, so no GPU is needed to meet
the message. The caller is SGLang's own fast_decode_plan (sglang/srt/layers/attention/flashinfer_backend.py,
which SGLang binds as each decode wrapper's begin_forward when it captures CUDA graphs), taken unchanged
from the release's PyPI wheel and run with the arguments its indices updater passes (page size 1, fp16).
Stand-ins, said in every step's notes: FlashInfer's BatchDecodeWithPagedKVCacheWrapper pins host memory at
construction, which needs a CUDA driver, so the `self` fast_decode_plan reads is a namespace holding what a
CUDA-graph wrapper holds (the compiled module, its workspace buffers on the host, the fixed batch size and
index buffer); torch.cuda.current_stream() answers with stream handle 0, and torch.cuda.device(...) (0.4.6.post2)
is a no-op. The op itself is FlashInfer's.

reproduce: SGLang 0.4.6.post1 with FlashInfer 0.2.5: the record's RuntimeError (16 values, 15 in the schema).
fix_1: FlashInfer 0.2.3, the release SGLang 0.4.6.post1's METADATA pins: the same call gets past the binder
(the plan's host code then needs a GPU: noted).
fix_2: SGLang 0.4.6.post2 (METADATA pins flashinfer_python 0.2.5) with FlashInfer 0.2.5: its fast_decode_plan
passes 15 values and gets past the binder."""

from verification.cases import _venv
from verification.cases.flashinfer import _fi02

BACKEND = "flashinfer"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
BINDER = "expected at most"


def reproduce(ctx):
    ctx.expect_error(_venv.raise_reported, _fi02.sglang_plan(ctx, "0.4.6.post1", "0.2.5"))


def fix_1(ctx):
    _fi02.plan_fits(ctx, "0.4.6.post1", _fi02.pinned(ctx, "0.4.6.post1"), BINDER)


def fix_2(ctx):
    _fi02.require_pin(ctx, "0.4.6.post2", "0.2.5")
    _fi02.plan_fits(ctx, "0.4.6.post2", "0.2.5", BINDER)
