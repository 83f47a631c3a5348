"""torch.compile(fullgraph=True) of a function that builds torch.backends.cuda.SDPAParams to ask
can_use_flash_attention: Dynamo in torch 2.2.2 stops with Unsupported "torch.* op returned
non-Tensor _SDPAParams call_function <class 'torch.backends.cuda._SDPAParams'>".

No GPU is needed: the error is Dynamo's, raised while it traces, before any kernel is chosen, and
SDPAParams and can_use_flash_attention take CPU tensors (the check then answers False). Each step runs
in a child process of a uv environment holding PyPI's Linux wheel of one torch (a CUDA build, which
imports on a CPU machine), numpy<2 and packaging; the compile uses backend="eager", since the failure
is in Dynamo's tracing, which every backend shares (noted). q, k and v are (1, 2, 8, 16) fp32 tensors.

reproduce: torch 2.2.2, SDPAParams built inside the compiled function.
fix_1: torch 2.4.1 (the release the record read): the SDPAParams built *outside* and passed in traces
with can_use_flash_attention in the graph; built inside, it still stops (noted: 2.4.1 says
"call_function UserDefinedClassVariable(<class 'torch.backends.cuda._SDPAParams'>) ...").
fix_2: torch 2.2.2, the decision made in a @torch.compiler.disable helper and the function compiled
without fullgraph (a graph break): runs, and its output equals the eager function's. The helper runs
can_use_flash_attention eagerly, which on torch 2.2.2 initialises CUDA even for CPU tensors, so without a
GPU the step is skipped with that reason.
fix_3: torch 2.2.2, scaled_dot_product_attention under fullgraph=True: compiles and matches the
fp32 reference.
control: torch 2.2.2, the same function without SDPAParams compiles with fullgraph=True."""

from pathlib import Path

from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "sdpa"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
OLD, NEW = "2.2.2", "2.4.1"
MARK = "ERRKB-DYNAMO "
ROOT = Path(__file__).resolve().parents[3]  # errkb's reference attention, imported by the child

CHILD = r'''
import json, sys, warnings
warnings.simplefilter("ignore")
import torch
import torch.nn.functional as F
from torch.backends.cuda import SDPAParams, can_use_flash_attention
MODE = sys.argv[1]
torch.manual_seed(0)
q, k, v = (torch.randn(1, 2, 8, 16) for _ in range(3))
extra = [False] if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 5) else []

def built_inside(q, k, v):
    params = SDPAParams(q, k, v, None, 0.0, False, *extra)
    use_flash = can_use_flash_attention(params)
    return q * 2 if use_flash else q * 3

def passed_in(q, params):
    return q * 2 if can_use_flash_attention(params) else q * 3

@torch.compiler.disable
def pick_backend(q, k, v):
    return can_use_flash_attention(SDPAParams(q, k, v, None, 0.0, False, *extra))

def disabled_helper(q, k, v):
    use_flash = pick_backend(q, k, v)
    return q * 2 if use_flash else q * 3

def sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)

def plain(q, k, v):
    return q * 3

def attempt(fn, *args, fullgraph=True):
    torch._dynamo.reset()
    try:
        out = torch.compile(fn, fullgraph=fullgraph, backend="eager")(*args)
        return {"raised": None, "out": out.tolist()}
    except Exception as e:
        return {"raised": [type(e).__module__ + "." + type(e).__name__, str(e)]}

res = {"torch": torch.__version__}
if MODE == "inside":
    res.update(attempt(built_inside, q, k, v))
elif MODE == "passed":
    res.update(attempt(passed_in, q, SDPAParams(q, k, v, None, 0.0, False, *extra)))
    res["inside"] = attempt(built_inside, q, k, v)["raised"]
elif MODE == "disabled":
    res.update(attempt(disabled_helper, q, k, v, fullgraph=False))
    try:
        res["eager"] = disabled_helper(q, k, v).tolist()
    except Exception as e:
        res["eager_raised"] = [type(e).__name__, str(e)]
elif MODE == "sdpa":
    res.update(attempt(sdpa, q, k, v))
    from errkb.verify.reference import attention
    res["ref"] = attention(q, k, v, layout="bhsd", causal=True, causal_align="top_left").tolist()
elif MODE == "plain":
    res.update(attempt(plain, q, k, v))
print(%r + json.dumps(res))
''' % MARK


def _run(ctx, torch: str, mode: str) -> dict:
    _, env = b.uv_env(ctx, f"torch-{torch}-dynamo", f"torch=={torch}", "numpy<2", "packaging")
    res = _venv.run([env.python, "-c", CHILD, mode], env=_venv.tool_env(VIRTUAL_ENV=str(env.path), PYTHONPATH=str(ROOT)),
                    timeout=900)
    got = _venv.reported(res, MARK)
    ctx.note(f"torch {got['torch']}, mode {mode!r}, backend='eager'")
    return got



def reproduce(ctx):
    got = _run(ctx, OLD, "inside")
    ctx.expect_error(_venv.raise_reported, got)


def fix_1(ctx):
    got = _run(ctx, NEW, "passed")
    ctx.call(_venv.raise_reported, got)
    if got["inside"]:
        ctx.note(f"torch {NEW}, SDPAParams built inside the compiled function still stops: "
                 f"{got['inside'][0]}: {got['inside'][1].splitlines()[0][:200]}")


def fix_2(ctx):
    got = _run(ctx, OLD, "disabled")
    for raised in (got["raised"], got.get("eager_raised")):
        if raised and "CUDA driver version is insufficient" in raised[1]:
            ctx.skip(f"torch {OLD} runs can_use_flash_attention eagerly here (outside the graph), and that call "
                     f"initialises CUDA: '{raised[1].splitlines()[0]}' on this machine without a GPU; needs a GPU "
                     f"with a torch {OLD} build")
    ctx.call(_venv.raise_reported, got)
    ctx.close(got["out"], got["eager"], atol=0.0, what="compiled with a graph break against eager")


def fix_3(ctx):
    got = _run(ctx, OLD, "sdpa")
    ctx.call(_venv.raise_reported, got)
    ctx.close(got["out"], got["ref"], atol=1e-5, rtol=1e-5)


def control(ctx):
    got = _run(ctx, OLD, "plain")
    ctx.call(_venv.raise_reported, got)
    if got["out"] is None:
        raise Refuted("no output")
