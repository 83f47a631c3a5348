"""sageattention 1.0.0's sageattn on fp16 tensors of head dim 32: the int8 quantisation runs, no
branch picks an attention kernel for that size, and `return o` raises UnboundLocalError
"cannot access local variable 'o' where it is not associated with a value" (Python 3.11 wording).

Without a GPU: a uv environment of Python 3.11 with torch 2.13.0+cpu (the local CPU wheel), and
triton 3.5.1, numpy (the interpreter needs it) and sageattention==1.0.0 from PyPI; the child runs
under TRITON_INTERPRET=1, so the package's Triton quantisation kernel (per_block_int8) runs in Triton's interpreter on CPU tensors
(q, k, v: (1, 2, 128, 32) fp16). The error comes after that kernel, in sageattn's own Python. Its int8
attention kernels do not run in the interpreter (head dim 64 stops with InterpreterError there), so
the control, a head dim with a kernel, needs a GPU and is skipped here.

fix_1: the record's wrapper sends head dim 32 to PyTorch SDPA: runs, and matches the fp32 reference.
fix_2: `pip install -U sageattention` resolves to 1.0.6 on PyPI, which asserts q.is_cuda before its
head-dim assertion ('headdim should be in [64, 96, 128].'), so on CPU tensors the step sees only the
former and is skipped with what it observed (refuted if the UnboundLocalError is still there); on a GPU
the head-dim assertion is the clear failure the fix promises, and no PyPI release runs head dim 32."""

from pathlib import Path

from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "triton"
REQUIRES = {"cuda": False}
STEP_REQUIRES = {"control": {"cuda": True, "arch": "sm80+", "packages": ["sageattention", "triton"]}}
TIMEOUT = 900
OLD, NEW = "1.0.0", "1.0.6"
TRITON = "triton==3.5.1"
MARK = "ERRKB-SAGE "
ROOT = Path(__file__).resolve().parents[3]  # errkb's reference attention, imported by the child

CHILD = r'''
import json, sys, warnings
warnings.simplefilter("ignore")
import torch
import torch.nn.functional as F
from sageattention import sageattn
from errkb.verify.reference import attention as reference
MODE, D = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
q, k, v = (torch.randn(1, 2, 128, D, dtype=torch.float16) for _ in range(3))
ref = reference(q.float(), k.float(), v.float(), layout="bhsd").tolist()

_sdpa = F.scaled_dot_product_attention
def attention(q, k, v, is_causal=False, **kw):  # fix 1 as the record writes it
    if q.size(-1) in (64, 96, 128) and not kw:
        return sageattn(q, k, v, is_causal=is_causal)
    return _sdpa(q, k, v, is_causal=is_causal, **kw)

res = {"torch": torch.__version__, "python": sys.version.split()[0], "raised": None}
try:
    if MODE == "direct":
        out = sageattn(q.clone(), k.clone(), v.clone())
    else:
        F.scaled_dot_product_attention = attention
        out = F.scaled_dot_product_attention(q, k, v)
    res["out"], res["ref"] = out.float().tolist(), ref
except Exception as e:
    res["raised"] = [type(e).__name__, str(e)]
print(%r + json.dumps(res))
''' % MARK


def _run(ctx, sage: str, mode: str, d: int = 32) -> dict:
    _, env = b.uv_env(ctx, f"sageattention-{sage}", *b.cpu_torch_requirement(), TRITON, "numpy",
                        f"sageattention=={sage}")
    res = _venv.run([env.python, "-c", CHILD, mode, str(d)],
                    env=_venv.tool_env(VIRTUAL_ENV=str(env.path), PYTHONPATH=str(ROOT), TRITON_INTERPRET="1"),
                    timeout=600)
    got = _venv.reported(res, MARK)
    ctx.note(f"sageattention {sage}, torch {got['torch']}, Python {got['python']}, TRITON_INTERPRET=1, "
             f"mode {mode!r}, head dim {d}")
    return got



def reproduce(ctx):
    ctx.expect_error(_venv.raise_reported, _run(ctx, OLD, "direct"))


def fix_1(ctx):
    got = _run(ctx, OLD, "wrapped")
    ctx.call(_venv.raise_reported, got)
    ctx.close(got["out"], got["ref"], atol=2e-3, rtol=2e-3, what="head dim 32 through the wrapper (SDPA, fp16)")


def fix_2(ctx):
    got = _run(ctx, NEW, "direct")
    if got["raised"] and got["raised"][0] == "UnboundLocalError":
        raise Refuted(f"sageattention {NEW} still raises {got['raised'][0]}: {got['raised'][1]}")
    if not got["raised"]:
        ctx.call(_venv.raise_reported, got)
        ctx.close(got["out"], got["ref"], atol=2e-2, rtol=2e-2)
        return
    ctx.observed = {"class": got["raised"][0], "message": got["raised"][1]}
    if "must be on cuda" in got["raised"][1]:
        ctx.skip(f"sageattention {NEW} (what `pip install -U sageattention` installs from PyPI) asserts q.is_cuda "
                 f"before it looks at the head dim, so on this machine's CPU tensors it stops with "
                 f"{got['raised'][0]}: {got['raised'][1]!r}; its head-dim assertion needs a GPU")
    ctx.skip(f"sageattention {NEW} (what `pip install -U sageattention` installs from PyPI) raises "
             f"{got['raised'][0]}: {got['raised'][1]!r} for head dim 32 instead, the clear failure the fix "
             "promises; no PyPI release runs this head dim, so there is no output to compare")


def control(ctx):
    from sageattention import sageattn

    from errkb.verify.reference import attention

    t = ctx.torch
    t.manual_seed(0)
    q, k, v = (t.randn(1, 2, 128, 64, dtype=t.float16, device=ctx.device) for _ in range(3))
    ref = attention(q, k, v, layout="bhsd")  # before the call: sageattn subtracts k's mean in place
    out = ctx.call(sageattn, q, k, v)
    ctx.close(out, ref, atol=2e-2, rtol=2e-2)
