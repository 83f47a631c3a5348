"""SGLang 0.4.6.post2's decode plan under FlashInfer 0.2.3: torch's binder refuses the call with
"<module>::plan() is missing value for argument '_15'. Declaration: ...", the reverse of
flashinfer-torch-op-too-many-arguments.

On the CPU (verification/cases/flashinfer/_fi02.py, sglang_plan, shared with that record's case): FlashInfer's
decode module for fp16, head dim 128 is JIT-compiled from the PyPI sdist of the release named (nvcc 13.0, sm_90,
torch 2.11.0+cu130) and its `plan` op loaded (a JIT build registers it under the module's name, not
flashinfer_kernels: the record's template takes either); the caller is SGLang's own fast_decode_plan from the
release's PyPI wheel, run with the arguments its indices updater passes. Stand-ins, said in every step's notes:
the wrapper `self` is a namespace of what a CUDA-graph decode wrapper holds (constructing one pins host memory:
needs a CUDA driver); torch.cuda.current_stream() answers stream 0 and torch.cuda.device() is a no-op. The op and
torch's binder are real.

reproduce: SGLang 0.4.6.post2 (passes 15 values) with FlashInfer 0.2.3 (16-argument schema, the last an int, the
CUDA stream): the record's RuntimeError naming '_15'.
fix_1: FlashInfer 0.2.5, the release SGLang 0.4.6.post2's METADATA pins: the same call gets past the binder (the
plan's host code then needs a GPU: noted).
fix_2: keep FlashInfer 0.2.3 and install SGLang 0.4.6.post1, whose METADATA pins it: its fast_decode_plan passes 16
values and gets past the binder."""

from verification.cases import _venv
from verification.cases.flashinfer import _fi02

BACKEND = "flashinfer"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
BINDER = "is missing value for argument"


def reproduce(ctx):
    ctx.expect_error(_venv.raise_reported, _fi02.sglang_plan(ctx, "0.4.6.post2", "0.2.3"))


def fix_1(ctx):
    _fi02.plan_fits(ctx, "0.4.6.post2", _fi02.pinned(ctx, "0.4.6.post2"), BINDER)


def fix_2(ctx):
    _fi02.require_pin(ctx, "0.4.6.post1", "0.2.3")
    _fi02.plan_fits(ctx, "0.4.6.post1", "0.2.3", BINDER)
