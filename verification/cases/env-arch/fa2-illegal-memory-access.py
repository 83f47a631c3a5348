"""FlashAttention-2's paged decode given a block table with one entry far beyond the KV cache:
FA2 checks the table's dtype and shape, never its values, so the kernel reads outside the cache
and CUDA reports "an illegal memory access was encountered" (here at the synchronize after the
call, as asynchronous errors are reported).

Each step runs in a child process (the fault leaves its CUDA context unusable). The child says
at which stage the error came (the FlashAttention call or the synchronize after it) and re-raises
it as RuntimeError (torch 2.8+ raises torch.AcceleratorError, a RuntimeError subclass; the child
prints the original class). flash-attn 2.8.3, the reduced sm90 build: 256-token pages, head dim 128."""

from importlib import import_module

from errkb.verify.case import Refuted
from verification.cases import _child, _venv

fa = import_module("verification.cases.flash-attn._fa")

BACKEND = "flash-attn"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "flash_attn_2_cuda"]}
TIMEOUT = 300

CHILD = r'''
import sys
import torch
from flash_attn import flash_attn_with_kvcache

B, PAGE, PAGES, H, D = 2, 256, 6, 4, 128
torch.manual_seed(0)
q = torch.randn(B, 1, H, D, device="cuda", dtype=torch.bfloat16)
k_pages, v_pages = (torch.randn(PAGES, PAGE, H, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
table = torch.tensor([[0, 1], [2, 3]], device="cuda", dtype=torch.int32)
lens = torch.tensor([400, 300], device="cuda", dtype=torch.int32)
if MODE == "bad":
    table[1, 1] = 1 << 28  # a page far beyond the 6 allocated
if CHECK:  # the record's second fix, as written
    k_cache, block_table = k_pages, table
    if block_table is not None:
        assert int(block_table.max()) < k_cache.shape[0]
stage = "call"
try:
    out = flash_attn_with_kvcache(q, k_pages, v_pages, cache_seqlens=lens, block_table=table)
    stage = "synchronize"
    torch.cuda.synchronize()
except RuntimeError as exc:
    print(f"errkb: raised at {stage} as {type(exc).__module__}.{type(exc).__name__}", flush=True)
    raise RuntimeError(str(exc)) from None
torch.save({"q": q.cpu(), "k": k_pages.cpu(), "v": v_pages.cpu(), "table": table.cpu(), "lens": lens.cpu(),
            "out": out.cpu()}, sys.argv[1])
print("errkb: ran", flush=True)
'''


def _run(ctx, mode: str, check: bool = False, **env):
    code = CHILD.replace("MODE", repr(mode)).replace("CHECK", repr(check))
    res, saved = _child.run(ctx, code, f"fa2-ima-{mode}-{int(check)}-{len(env)}", env=env)
    stage = _child.printed(res.output, "errkb: raised at")
    ctx.note(f"{mode} block table{', checked first' if check else ''}{' ' + str(env) if env else ''}: "
             + (f"raised at {stage}: {_venv.last_exception(res.output, 200)}" if stage
                else _venv.last_exception(res.output, 200) if res.returncode else "ran"))
    return res, saved, (stage or "").split(" ")[0]


def _matches(ctx, res, saved):
    if saved is None:
        ctx.call(_venv.reraise, res.output)
        raise RuntimeError(f"the child neither ran nor printed an exception: {res.tail(600)}")
    n = saved["lens"].tolist()
    rows = [saved["table"][i].long() for i in range(len(n))]
    ks = [saved["k"][r].flatten(0, 1)[:n[i]] for i, r in enumerate(rows)]
    vs = [saved["v"][r].flatten(0, 1)[:n[i]] for i, r in enumerate(rows)]
    ctx.close(saved["out"], fa.kv_ref(saved["q"], ks, vs), **fa.TOL)


def reproduce(ctx):
    res, _, _ = _run(ctx, "bad")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    # CUDA_LAUNCH_BLOCKING=1: the error is raised by the FlashAttention call itself
    res, _, stage = _run(ctx, "bad", CUDA_LAUNCH_BLOCKING="1")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])
    if stage != "call":
        raise Refuted(f"with CUDA_LAUNCH_BLOCKING=1 the error still came at the {stage or 'end'}, not at the call")


def fix_2(ctx):
    # the record's check stops the bad table before any kernel runs, and lets the good one through
    res, _, _ = _run(ctx, "bad", check=True)
    if "AssertionError" not in _venv.last_exception(res.output):
        raise Refuted(f"the check did not stop the bad block table: {_venv.last_exception(res.output, 300)}")
    _matches(ctx, *_run(ctx, "good", check=True)[:2])


def fix_3(ctx):
    ctx.skip("another flash-attn release or backend is a package change; the fault here is the caller's")


def control(ctx):
    _matches(ctx, *_run(ctx, "good")[:2])
