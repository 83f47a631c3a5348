"""nn.MultiheadAttention(..., batch_first=True) on torch 1.8.1: the constructor has no such
parameter and Python raises TypeError "__init__() got an unexpected keyword argument 'batch_first'"
(Python 3.8 prints the bare `__init__()`; 3.10 and later prefix the class name).

No GPU is needed: the error is raised while the layer is built. Each step runs in a child process of
a uv environment with Python 3.8 (pyenv) holding PyPI's torch wheel of the release the step names
(1.8.1 or 1.9.0, CUDA 10.2 builds that import on a CPU machine) and numpy<1.25.

reproduce: torch 1.8.1, nn.MultiheadAttention(64, 4, batch_first=True).
fix_1: torch 1.9.0 builds the same layer and runs it on a (batch 2, length 10, width 64) input; the
output matches attention written out from the layer's weights.
fix_2: torch 1.8.1, the record's workaround (no batch_first, transposes around the call) gives the
batch-first output, checked against the same written-out attention.
control: torch 1.8.1, the layer without batch_first on a (length, batch, width) input matches it too."""


from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "sdpa"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
PYTHON = "3.8"
OLD, NEW = "1.8.1", "1.9.0"
MARK = "ERRKB-MHA "

CHILD = r'''
import json, sys, warnings
warnings.simplefilter("ignore")
import torch
MODE = sys.argv[1]
B, L, E, H = 2, 10, 64, 4
torch.manual_seed(0)
x = torch.randn(B, L, E)

def by_hand(mha, x):
    """Batch-first attention from the layer's weights, written out."""
    q, k, v = (x @ w.T + b for w, b in zip(mha.in_proj_weight.chunk(3), mha.in_proj_bias.chunk(3)))
    split = lambda y: y.view(B, L, H, E // H).transpose(1, 2)
    q, k, v = split(q), split(k), split(v)
    p = torch.softmax(q @ k.transpose(-1, -2) / (E // H) ** 0.5, dim=-1)
    o = (p @ v).transpose(1, 2).reshape(B, L, E)
    return o @ mha.out_proj.weight.T + mha.out_proj.bias

res = {"torch": torch.__version__, "python": sys.version.split()[0], "raised": None}
try:
    with torch.no_grad():
        if MODE == "batch_first":
            mha = torch.nn.MultiheadAttention(E, H, batch_first=True).eval()
            out = mha(x, x, x)[0]
        elif MODE == "transposed":
            mha = torch.nn.MultiheadAttention(E, H).eval()
            xt = x.transpose(0, 1)
            out = mha(xt, xt, xt)[0].transpose(0, 1)
        else:  # "seq_first": the layer's own layout, the output turned batch-first for comparison
            mha = torch.nn.MultiheadAttention(E, H).eval()
            out = mha(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1))[0].transpose(0, 1)
        res["err"] = float((out - by_hand(mha, x)).abs().max())
except Exception as e:
    res["raised"] = [type(e).__name__, str(e)]
print(%r + json.dumps(res))
''' % MARK


def _env(ctx, torch: str) -> _venv.Venv:
    """A uv environment of Python 3.8 with PyPI's torch==`torch` (as _builds.uv_env, another Python)."""
    exe = _venv.interpreter(PYTHON)
    if exe is None:
        ctx.skip(f"needs a Python {PYTHON} interpreter (none on PATH or under pyenv)")
    tool = _venv.venv(ctx, f"uv-{b.UV}-tool", install=[f"uv=={b.UV}"])
    target = _venv._tmp_root() / f"uv-py{PYTHON}-torch-{torch}"
    reqs = [f"torch=={torch}", "numpy<1.25"]
    stamp = target / ".errkb-recipe"
    if not (stamp.is_file() and stamp.read_text() == repr(reqs)):
        made = _venv.run([tool.bin("uv"), "venv", "-q", target, "--python", exe], timeout=300)
        if made.returncode != 0:
            raise RuntimeError(f"uv venv failed: {made.tail()}")
        res = _venv.run([tool.bin("uv"), "pip", "install", "--python", target / "bin" / "python", *reqs], timeout=1800)
        if res.returncode != 0:
            ctx.skip(f"could not install {' '.join(reqs)} with uv: {res.tail(400)}")
        stamp.write_text(repr(reqs))
    ctx.note(f"environment made by uv {b.UV} (`uv venv`, Python {exe}) with {' '.join(reqs)}")
    return _venv.Venv(target)


def _run(ctx, torch: str, mode: str) -> dict:
    env = _env(ctx, torch)
    res = _venv.run([env.python, "-c", CHILD, mode], env=_venv.tool_env(VIRTUAL_ENV=str(env.path)), timeout=600)
    got = _venv.reported(res, MARK)
    ctx.note(f"torch {got['torch']} on Python {got['python']}, mode {mode!r}")
    return got



def _matches(ctx, got, what):
    ctx.call(_venv.raise_reported, got)
    ctx.close([got["err"]], [0.0], atol=1e-5, what=what)  # the child's max difference


def reproduce(ctx):
    ctx.expect_error(_venv.raise_reported, _run(ctx, OLD, "batch_first"))


def fix_1(ctx):
    _matches(ctx, _run(ctx, NEW, "batch_first"), f"torch {NEW}, batch_first=True, against attention by hand")


def fix_2(ctx):
    _matches(ctx, _run(ctx, OLD, "transposed"), f"torch {OLD}, transposed around the layer, against attention by hand")


def control(ctx):
    _matches(ctx, _run(ctx, OLD, "seq_first"), f"torch {OLD}, sequence-first layer, against attention by hand")
