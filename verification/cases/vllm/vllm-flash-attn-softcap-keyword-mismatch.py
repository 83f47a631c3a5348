"""vLLM 0.5.4-0.6.1.post2's FlashAttention backend passes softcap= to vllm_flash_attn's
flash_attn_varlen_func; vllm-flash-attn 2.5.9.post1 (the fork vLLM 0.5.3.post1 pins) has no such
parameter and Python raises TypeError "flash_attn_varlen_func() got an unexpected keyword argument
'softcap'" before any kernel runs.

On the CPU: uv environments with PyPI's vllm-flash-attn wheel and the torch it requires (2.5.9.post1 with
torch 2.3.1, 2.6.1 with torch 2.4.0; CUDA builds whose libraries load without a GPU) and numpy<2. The
call uses the keywords of vLLM 0.5.4's first prefill call (vllm/attention/backends/flash_attn.py: q, k,
v, cu_seqlens_q/k, max_seqlen_q/k, softmax_scale, causal=True, window_size, alibi_slopes, softcap with
vLLM's default 0 when the model has no soft-capping), on fp16 CPU tensors (16 tokens, 4 heads, head dim 64).

reproduce: vllm-flash-attn 2.5.9.post1: the call raises the record's TypeError.
fix_1: vLLM 0.5.4's wheel METADATA pins vllm-flash-attn==2.6.1 and torch==2.4.0, and with 2.6.1 the same
keywords bind to flash_attn_varlen_func's signature; the call then goes on into the compiled operator,
which stops on this machine without a GPU when it touches CUDA (noted; no output is compared).
fix_2: vLLM 0.6.2's wheel METADATA no longer requires vllm-flash-attn, and the wheel carries
vllm/vllm_flash_attn/flash_attn_interface.py, whose flash_attn_varlen_func has softcap (read with ast).
control: with 2.5.9.post1, the same keywords without softcap bind to the signature."""

import ast
import re
import zipfile

from errkb.verify.case import Refuted
from verification.cases import _abi_wheels as abi
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
OLD, NEW = "2.5.9.post1", "2.6.1"
MARK = "ERRKB-VFA "

CHILD = r'''
import inspect, json, sys, warnings
warnings.simplefilter("ignore")
import torch
import vllm_flash_attn
from vllm_flash_attn import flash_attn_varlen_func
MODE = sys.argv[1]
torch.manual_seed(0)
q, k, v = (torch.randn(16, 4, 64, dtype=torch.float16) for _ in range(3))
seq_start_loc = torch.tensor([0, 16], dtype=torch.int32)
kw = dict(q=q, k=k, v=v, cu_seqlens_q=seq_start_loc, cu_seqlens_k=seq_start_loc, max_seqlen_q=16, max_seqlen_k=16,
          softmax_scale=0.125, causal=True, window_size=(-1, -1), alibi_slopes=None, softcap=0)
if MODE == "plain":
    kw.pop("softcap")
res = {"torch": torch.__version__, "fa": getattr(vllm_flash_attn, "__version__", "?"), "raised": None}
try:
    inspect.signature(flash_attn_varlen_func).bind(**kw)
    res["binds"] = True
except TypeError as e:
    res["binds"] = str(e)
try:
    flash_attn_varlen_func(**kw)
    res["ran"] = True
except Exception as e:
    res["raised"] = [type(e).__name__, str(e)]
print(%r + json.dumps(res))
''' % MARK


def _run(ctx, fa: str, mode: str) -> dict:
    _, env = b.uv_env(ctx, f"vllm-flash-attn-{fa}", f"vllm-flash-attn=={fa}", "numpy<2")
    res = _venv.run([env.python, "-c", CHILD, mode], env=_venv.tool_env(VIRTUAL_ENV=str(env.path)), timeout=600)
    got = _venv.reported(res, MARK)
    ctx.note(f"vllm-flash-attn {got['fa']} with torch {got['torch']}, mode {mode!r}: signature binds: {got['binds']}; "
             "call: " + ("ran" if not got["raised"] else f"{got['raised'][0]}: {got['raised'][1][:200]}"))
    return got



def _binds(got):
    if got["binds"] is not True:
        raise TypeError(got["binds"])


def _requires(ctx, release: str) -> list[str]:
    meta = b.wheel_metadata(ctx, "vllm", release)
    return [line.split(":", 1)[1].split(";")[0].strip() for line in meta.splitlines()
            if re.match(r"Requires-Dist:\s*(torch|vllm[-_]flash[-_]attn)\b", line)]


def reproduce(ctx):
    ctx.expect_error(_venv.raise_reported, _run(ctx, OLD, "softcap"))


def fix_1(ctx):
    pins = _requires(ctx, "0.5.4")
    ctx.note(f"vllm 0.5.4's METADATA: {pins}")
    if not {"vllm-flash-attn==2.6.1", "torch==2.4.0"} <= {p.replace(" ", "") for p in pins}:
        raise Refuted(f"vllm 0.5.4 does not pin vllm-flash-attn 2.6.1 and torch 2.4.0: {pins}")
    got = _run(ctx, NEW, "softcap")
    ctx.call(_binds, got)
    if got["raised"] and "unexpected keyword argument" in got["raised"][1]:
        raise Refuted(f"{got['raised'][0]}: {got['raised'][1]}")


def fix_2(ctx):
    pins = _requires(ctx, "0.6.2")
    ctx.note(f"vllm 0.6.2's METADATA: {pins}")
    if any(re.match(r"vllm[-_]flash[-_]attn", p) for p in pins):
        raise Refuted(f"vllm 0.6.2 still requires the separate vllm-flash-attn: {pins}")
    with zipfile.ZipFile(abi.wheel_file(ctx, "vllm", "0.6.2")) as z:
        name = "vllm/vllm_flash_attn/flash_attn_interface.py"
        if name not in z.namelist():
            raise Refuted(f"vllm 0.6.2's wheel has no {name}")
        tree = ast.parse(z.read(name).decode())
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "flash_attn_varlen_func")
    params = [a.arg for a in fn.args.args + fn.args.kwonlyargs]
    ctx.note(f"vllm 0.6.2's bundled flash_attn_varlen_func parameters: {params}")
    if "softcap" not in params:
        raise Refuted("the bundled flash_attn_varlen_func has no softcap parameter")


def control(ctx):
    got = _run(ctx, OLD, "plain")
    ctx.call(_binds, got)
