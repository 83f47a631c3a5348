"""SGLang 0.4.6.post1's decode plan under FlashInfer 0.2.5: torch's binder refuses the call with
"<module>::plan() expected at most 15 argument(s) but received 16 argument(s). Declaration: ...".

On the CPU (verification/cases/flashinfer/_fi02.py): FlashInfer's decode module for fp16, head dim 128 is
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

from errkb.verify.case import Refuted
from verification.cases import _abi_wheels as abi
from verification.cases import _venv
from verification.cases.flashinfer import _fi02

BACKEND = "flashinfer"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
MARK = "ERRKB-FIPLAN "
BINDER = "expected at most"

CHILD = r'''
import __future__, ast, json, sys, zipfile
from contextlib import nullcontext
from types import SimpleNamespace
import torch
SGLANG_WHEEL = sys.argv[1]
out = {"torch": torch.__version__, "raised": None}
import flashinfer
from flashinfer.decode import get_batch_decode_module
out["flashinfer"] = flashinfer.__version__
mod = get_batch_decode_module(torch.float16, torch.float16, torch.float16, torch.int32, 128, 128, 0, False, False)
schema = mod.plan.default._schema if hasattr(mod.plan, "default") else mod.plan._schema
out["schema"], out["schema_args"] = str(schema), len(schema.arguments)
name = "sglang/srt/layers/attention/flashinfer_backend.py"
with zipfile.ZipFile(SGLANG_WHEEL) as z:
    tree = ast.parse(z.read(name).decode())
fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "fast_decode_plan")
calls = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "plan"]
out["sglang_passes"] = sorted({len(c.args) for c in calls})
ns = {"torch": torch, "global_override_indptr_cpu": None}
exec(compile(ast.Module([fn], []), name, "exec", flags=__future__.annotations.compiler_flag), ns)
torch.cuda.current_stream = lambda device=None: SimpleNamespace(cuda_stream=0)
torch.cuda.device = lambda device=None: nullcontext()
bs, kv_len = 2, 16
buf = lambda n, dt=torch.uint8: torch.empty(n, dtype=dt)
wrapper = SimpleNamespace(use_tensor_cores=False, is_cuda_graph_enabled=True, _fixed_batch_size=bs,
                          _paged_kv_indices_buf=buf(bs * kv_len, torch.int32), _cached_module=mod,
                          _float_workspace_buffer=buf(128 * 1024 * 1024), _int_workspace_buffer=buf(8 * 1024 * 1024),
                          _pin_memory_int_workspace_buffer=buf(8 * 1024 * 1024), device=torch.device("cpu"))
indptr = torch.arange(bs + 1, dtype=torch.int32) * kv_len
indices = torch.arange(bs * kv_len, dtype=torch.int32)
last_page_len = torch.ones(bs, dtype=torch.int32)
try:
    ns["fast_decode_plan"](wrapper, indptr, indices, last_page_len, 32, 8, 128, 1,
                           data_type=torch.float16, q_data_type=torch.float16, non_blocking=True)
    out["returned"] = True
except BaseException as e:
    out["raised"] = [type(e).__name__, str(e)]
print(%r + json.dumps(out), flush=True)
''' % MARK

STANDIN = ("stand-ins: the wrapper `self` is a namespace of what a CUDA-graph BatchDecodeWithPagedKVCacheWrapper holds "
           "(constructing one pins host memory: needs a CUDA driver); torch.cuda.current_stream() answers stream 0 and "
           "torch.cuda.device() is a no-op; the plan op is FlashInfer's, compiled here")


def _pin(ctx, sglang: str) -> str:
    pins = abi.requires(ctx, "sglang", sglang, "flashinfer_python")
    ctx.note(f"sglang {sglang}'s METADATA: {pins}")
    got = [p.split("==", 1)[1] for p in pins if "==" in p]
    if not got:
        raise RuntimeError(f"sglang {sglang} pins no flashinfer_python release: {pins}")
    return got[0]


def _run(ctx, sglang: str, flashinfer: str) -> dict:
    wheel = abi.wheel_file(ctx, "sglang", sglang)
    res = _fi02.run(ctx, flashinfer, CHILD.replace("sys.argv[1]", repr(str(wheel))))
    got = _venv.reported(res, MARK)
    if STANDIN not in ctx.notes:
        ctx.note(STANDIN)
    ctx.note(f"FlashInfer {got['flashinfer']} (torch {got['torch']}): plan schema has {got['schema_args']} arguments "
             f"({got['schema'][:160]}...); SGLang {sglang}'s fast_decode_plan passes {got['sglang_passes']}; call: "
             + (f"{got['raised'][0]}: {got['raised'][1][:240]}" if got["raised"] else "returned"))
    return got


def _past_binder(got: dict) -> None:
    if got["raised"] and BINDER in got["raised"][1]:
        raise _venv.exception_class(got["raised"][0])(got["raised"][1])


def reproduce(ctx):
    ctx.expect_error(_venv.raise_reported, _run(ctx, "0.4.6.post1", "0.2.5"))


def fix_1(ctx):
    got = _run(ctx, "0.4.6.post1", _pin(ctx, "0.4.6.post1"))
    ctx.call(_past_binder, got)
    if got["schema_args"] != 16:
        raise Refuted(f"the pinned FlashInfer's plan takes {got['schema_args']} arguments, not the 16 SGLang passes")


def fix_2(ctx):
    if _pin(ctx, "0.4.6.post2") != "0.2.5":
        raise Refuted("sglang 0.4.6.post2 does not pin flashinfer_python 0.2.5")
    got = _run(ctx, "0.4.6.post2", "0.2.5")
    ctx.call(_past_binder, got)
    if got["sglang_passes"] != [got["schema_args"]]:
        raise Refuted(f"SGLang 0.4.6.post2 passes {got['sglang_passes']} values, the schema has {got['schema_args']}")
