"""torch 2.3+ warns "torch.backends.cuda.sdp_kernel() is deprecated ... Please see torch.nn.attention.sdpa_kernel()
..." (FutureWarning) whenever the old backend-selection context manager is used.

Runs in a child process on a CPU-only torch (b.with_cpu_torch(), torch 2.13.0+cpu): the context manager only
flips torch's global SDPA switches, which exist in CPU builds too, and scaled_dot_product_attention on the
CPU honours the flash and math switches. The 2.3.x wording (no backticks, warned on entering the block) was
read from the 2.3.0 wheel, not run: no 2.3 build for this machine is at hand.

Reproduce: `with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False,
enable_mem_efficient=False)` emits the record's FutureWarning (the step notes the file it points at).
Fix 1: for all 16 combinations of enable_flash/enable_math/enable_mem_efficient/enable_cudnn, the switches
inside sdpa_kernel(<the list the fix's mapping gives>) equal those inside the old call, and sdpa_kernel warns
nothing; the fix's own code (FLASH_ATTENTION alone) runs SDPA on the CPU and matches an fp64 reference; the
caveat is checked too: the old flash-only call leaves cuDNN on, the new one turns it off. Fix 2: the
fix's try/except picks sdpa_kernel on this torch, warns nothing, and SDPA inside it matches the reference.
Fix 3: with the fix's filter installed first, the old call emits no such warning."""

import json

from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
ATOL = 1e-5  # float32 SDPA on the CPU against a float64 reference

CHILD = r'''
import itertools, json, sys, warnings, torch
import torch.nn.functional as F
print("torch", torch.__version__, flush=True)
MODE = sys.argv[1]
cuda = torch.backends.cuda
def switches():
    return [cuda.flash_sdp_enabled(), cuda.mem_efficient_sdp_enabled(), cuda.math_sdp_enabled(), cuda.cudnn_sdp_enabled()]
torch.manual_seed(0)
q, k, v = (torch.randn(2, 4, 16, 32) for _ in range(3))
ref = torch.softmax(q.double() @ k.double().transpose(-2, -1) / 32 ** 0.5, -1) @ v.double()
def err(out):
    return float((out.double() - ref).abs().max())
def show(caught):
    for w in caught:
        print(f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}", flush=True)

if MODE == "old":
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
            out = F.scaled_dot_product_attention(q, k, v)
    show(caught)
    print("RESULT", json.dumps({"maxerr": err(out)}), flush=True)
elif MODE == "mapping":
    from torch.nn.attention import SDPBackend, sdpa_kernel
    same, mismatched, caught_new = 0, [], []
    for flash, math, mem, cudnn in itertools.product([True, False], repeat=4):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with cuda.sdp_kernel(enable_flash=flash, enable_math=math, enable_mem_efficient=mem, enable_cudnn=cudnn):
                old = switches()
        chosen = ([SDPBackend.FLASH_ATTENTION] if flash else []) + ([SDPBackend.EFFICIENT_ATTENTION] if mem else []) \
            + ([SDPBackend.MATH] if math else []) + ([SDPBackend.CUDNN_ATTENTION] if cudnn else [])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with sdpa_kernel(chosen):
                new = switches()
        caught_new += caught
        if old == new:
            same += 1
        else:
            mismatched.append([flash, math, mem, cudnn, old, new])
    show(caught_new)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
            old_flash_only = switches()
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        new_flash_only = switches()
        out = F.scaled_dot_product_attention(q, k, v)
    print("RESULT", json.dumps({"same": same, "mismatched": mismatched, "old_flash_only": old_flash_only,
                                "new_flash_only": new_flash_only, "maxerr": err(out), "after": switches()}), flush=True)
elif MODE == "fallback":
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel
            ctx = sdpa_kernel([SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION])
            took = "sdpa_kernel"
        except ImportError:  # torch < 2.3
            ctx = cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=True)
            took = "sdp_kernel"
        with ctx:
            inside = switches()
            out = F.scaled_dot_product_attention(q, k, v)
    show(caught)
    print("RESULT", json.dumps({"took": took, "inside": inside, "maxerr": err(out)}), flush=True)
elif MODE == "filtered":
    warnings.simplefilter("always")
    warnings.filterwarnings("ignore", message=r".*sdp_kernel\(\).* is deprecated", category=FutureWarning)
    with warnings.catch_warnings(record=True) as caught:
        with cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
            out = F.scaled_dot_product_attention(q, k, v)
    show(caught)
    print("RESULT", json.dumps({"warnings": len(caught), "maxerr": err(out)}), flush=True)
'''

_runs: dict = {}


def _run(ctx, mode: str) -> tuple[_venv.Run, dict]:
    if mode not in _runs:
        env = b.with_cpu_torch(ctx)
        _venv.noted(ctx, env)
        _runs[mode] = b.run_with_torch(ctx, CHILD.replace("sys.argv[1]", repr(mode)), env=env)
    res = _runs[mode]
    _venv.reraise(res.output)
    found = [line[7:] for line in res.output.splitlines() if line.startswith("RESULT ")]
    if not found:
        raise AssertionError(f"{mode}: the child printed no result: {res.tail(600)}")
    return res, json.loads(found[-1])


def _no_record_warning(ctx, res: _venv.Run, what: str) -> None:
    hits = [m for _, m in _venv.warning_lines(res.output) if _venv.tool_message(m, ctx.record["template"])]
    if hits:
        ctx.observed = {"class": "FutureWarning", "message": hits[0]}
        raise Refuted(f"{what} still warns")


def reproduce(ctx):
    res, result = _run(ctx, "old")
    where = [line.split(": FutureWarning", 1)[0] for line in res.output.splitlines() if ": FutureWarning" in line]
    ctx.note(f"warned at {where}; SDPA inside the old block: max error {result['maxerr']:.2e}")
    ctx.expect_warning(b.reemit_warnings, res.output)


def fix_1(ctx):
    res, result = ctx.call(_run, ctx, "mapping")
    _no_record_warning(ctx, res, "sdpa_kernel")
    ctx.note(f"{result['same']} of 16 combinations give the same switches; flash-only: old call "
             f"{result['old_flash_only']}, sdpa_kernel([FLASH_ATTENTION]) {result['new_flash_only']} "
             f"(flash, mem_efficient, math, cudnn); after the block: {result['after']}")
    if result["mismatched"]:
        ctx.observed = {"class": None, "message": None, "mismatched": result["mismatched"]}
        raise Refuted(f"{len(result['mismatched'])} combinations differ")
    if not (result["old_flash_only"][3] and not result["new_flash_only"][3]):
        ctx.observed = {"class": None, "message": None, "old": result["old_flash_only"], "new": result["new_flash_only"]}
        raise Refuted("the cuDNN caveat does not hold on this torch")
    ctx.close([result["maxerr"]], [0.0], atol=ATOL, what="SDPA under sdpa_kernel([FLASH_ATTENTION]) against fp64")


def fix_2(ctx):
    res, result = ctx.call(_run, ctx, "fallback")
    _no_record_warning(ctx, res, "the fallback code")
    ctx.note(f"took {result['took']}; switches inside {result['inside']} (flash, mem_efficient, math, cudnn)")
    if result["took"] != "sdpa_kernel" or result["inside"] != [False, True, True, False]:
        ctx.observed = {"class": None, "message": None, "result": result}
        raise Refuted("the fallback did not select the new context manager with MATH and EFFICIENT_ATTENTION")
    ctx.close([result["maxerr"]], [0.0], atol=ATOL, what="SDPA inside the fallback's context against fp64")


def fix_3(ctx):
    res, result = ctx.call(_run, ctx, "filtered")
    _no_record_warning(ctx, res, "the filtered call")
    ctx.note(f"warnings recorded with the filter installed: {result['warnings']}")
    ctx.close([result["maxerr"]], [0.0], atol=ATOL, what="SDPA inside the old block against fp64")
