"""FlashAttention-3's varlen forward given cu_seqlens_q whose last sequence starts far beyond the
packed queries: FA3 checks the offsets' dtype and shape, never their values, and for varlen inputs it
writes the output with plain stores (no TMA, which would clip), so the kernel writes outside the
output and CUDA reports "an illegal memory access was encountered".

Run with CUDA_LAUNCH_BLOCKING=1, the fault is seen by FA3's own launch check
(hopper/cuda_check.h), which prints `CUDA error (<build path>/hopper/<file>:<line>): ...` to
stderr and calls exit(1): the record's line, with no Python traceback. Without blocking launches
the first CUDA check after the kernel sees it, which may be torch's (a Python exception) rather
than FA3's; that run is kept as a note. Each run is a child process (a fault ends its CUDA
context). flash-attn 2.8.3's hopper/ build (the reduced sm90 build): bf16, head dim 128."""

from importlib import import_module

from errkb.verify.case import Refuted
from verification.cases import _child, _venv

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn_interface", "flash_attn_3"]}
TIMEOUT = 300

CHILD = r'''
import sys
import torch
from flash_attn_interface import flash_attn_varlen_func

LENS, H, D = [100, 37, 128], 4, 128
torch.manual_seed(0)
q, k, v = (torch.randn(sum(LENS), H, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
cu = torch.nn.functional.pad(torch.cumsum(torch.tensor(LENS, device="cuda"), 0, dtype=torch.int32), (1, 0))
cu_q, cu_k = cu.clone(), cu.clone()
if MODE == "bad":
    # the last sequence starts 64M rows past the 265 packed queries (128 rows long, as max_seqlen_q says:
    # FA3 sizes its grid by max_seqlen_q, so an offset past the end, not a long sequence, reaches outside)
    cu_q[-2], cu_q[-1] = 1 << 26, (1 << 26) + 128
if CHECK:  # the record's third fix: offsets start at 0, never decrease, end at the number of rows
    for offsets, rows in ((cu_q, q.shape[0]), (cu_k, k.shape[0])):
        assert int(offsets[0]) == 0 and bool((offsets[1:] >= offsets[:-1]).all()) and int(offsets[-1]) == rows
stage = "call"
try:
    out = flash_attn_varlen_func(q, k, v, cu_q, cu_k, 128, 128)
    out = out[0] if isinstance(out, tuple) else out
    stage = "synchronize"
    torch.cuda.synchronize()
except RuntimeError as exc:
    print(f"errkb: raised at {stage} as {type(exc).__module__}.{type(exc).__name__}", flush=True)
    raise RuntimeError(str(exc)) from None
torch.save({"q": q.cpu(), "k": k.cpu(), "v": v.cpu(), "cu": cu.cpu(), "out": out.cpu()}, sys.argv[1])
print("errkb: ran", flush=True)
'''


def _run(ctx, mode: str, check: bool = False, **env):
    code = CHILD.replace("MODE", repr(mode)).replace("CHECK", repr(check))
    res, saved = _child.run(ctx, code, f"fa3-ima-{mode}-{int(check)}-{len(env)}", env=env)
    line = _venv.tool_message(res.output, ctx.record["template"])
    ctx.note(f"{mode} cu_seqlens_q{', checked first' if check else ''}{' ' + str(env) if env else ''}: exit "
             f"{res.returncode}, " + (f"FA3 printed {line!r}" if line else _venv.last_exception(res.output, 200)
                                     if res.returncode else "ran"))
    return res, saved


def _matches(ctx, res, saved):
    if saved is None:
        ctx.call(_venv.reraise, res.output)
        raise RuntimeError(f"the child neither ran nor printed an exception: {res.tail(600)}")
    cu = saved["cu"]
    ctx.close(saved["out"], fa.varlen_ref(saved["q"], saved["k"], saved["v"], cu, cu), **fa.TOL)


def reproduce(ctx):
    res, _ = _run(ctx, "bad", CUDA_LAUNCH_BLOCKING="1")
    ctx.expect_error(_venv.raise_tool_message, "CUDA", res.output, ctx.record["template"])
    if res.returncode != 1:
        raise Refuted(f"FA3's check exits with status 1; the child ended with {res.returncode}")
    # the same call without blocking launches: who sees the fault first (a note for the record's meaning)
    _run(ctx, "bad")


def fix_1(ctx):
    ctx.skip("reading which build printed the path (sgl-kernel, vLLM's vllm_flash_attn, flash_attn_3) is done by eye")


def fix_2(ctx):
    ctx.skip("switching a serving engine's attention backend needs SGLang or vLLM, which this image does not carry")


def fix_3(ctx):
    # the record's check stops the bad offsets before any kernel runs, and lets the good ones through
    res, _ = _run(ctx, "bad", check=True)
    if "AssertionError" not in _venv.last_exception(res.output):
        raise Refuted(f"the check did not stop the bad offsets: {_venv.last_exception(res.output, 300)}")
    _matches(ctx, *_run(ctx, "good", check=True))


def control(ctx):
    _matches(ctx, *_run(ctx, "good"))
