"""sgm's guarded xformers import: "name 'xformers' is not defined" when an xformers attention block is still
built and run.

Stability AI's generative-models at commit 059d8e9c (the commit the record read): sgm/modules/diffusionmodules/
model.py and the sgm/modules/attention.py it imports, exported from a local clone (ERRKB_VERIFY_GIT), run by
a CPU-only torch (2.13.0+cpu, `_builds.with_cpu_torch`) with einops 0.8.1 and numpy 2.2.6; xformers is not installed. The two files
are loaded as sgm.modules.diffusionmodules.model with the sgm packages' __init__ files left out (they import
the whole training stack: Lightning, OmegaConf, open_clip ...); nothing else is replaced.

Reproduce: the import logs "no module 'xformers'. Processing without..." and sets XFORMERS_IS_AVAILABLE =
False (noted), make_attn(64, "vanilla-xformers") still returns MemoryEfficientAttnBlock, and its forward
pass raises the record's NameError. Fix 1: the fix's first command names the cause the bare `except:` hid
(here "No module named 'xformers'"). Fix 2: attn_type "vanilla" builds AttnBlock (PyTorch SDPA), whose
forward pass runs and matches the block's own weights applied in float64."""

from verification.cases import _builds as b
from verification.cases import _downstream
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
REPO = "Stability-AI/generative-models"
COMMIT = "059d8e9cd9c55aea1ef2ece39abf605efb8b7cc9"
FILES = ["sgm/modules/diffusionmodules/model.py", "sgm/modules/attention.py"]

LOAD = """
import os, sys, types, torch
root = sys.argv[1]
for name, sub in (("sgm", "sgm"), ("sgm.modules", "sgm/modules"), ("sgm.modules.diffusionmodules", "sgm/modules/diffusionmodules")):
    m = types.ModuleType(name); m.__path__ = [os.path.join(root, sub)]; sys.modules[name] = m
from sgm.modules.diffusionmodules.model import make_attn, XFORMERS_IS_AVAILABLE
print("XFORMERS_IS_AVAILABLE", XFORMERS_IS_AVAILABLE, flush=True)
torch.manual_seed(0)
blk = make_attn(64, attn_type=sys.argv[2]).eval()
print("BLOCK", type(blk).__name__, flush=True)
x = torch.randn(2, 64, 4, 4)
with torch.no_grad():
    out = blk(x)
    xd = x.double()
    h = torch.nn.functional.group_norm(xd, 32, blk.norm.weight.double(), blk.norm.bias.double(), 1e-6)
    q, k, v = (torch.nn.functional.conv2d(h, c.weight.double(), c.bias.double()).flatten(2).transpose(1, 2) for c in (blk.q, blk.k, blk.v))
    a = torch.softmax(q @ k.transpose(1, 2) / 64 ** 0.5, -1) @ v
    a = a.transpose(1, 2).reshape(2, 64, 4, 4)
    ref = xd + torch.nn.functional.conv2d(a, blk.proj_out.weight.double(), blk.proj_out.bias.double())
print("max_abs_error", (out.double() - ref).abs().max().item(), flush=True)
"""


def run(ctx, attn_type: str) -> _venv.Run:
    tree = _downstream.tree(ctx, REPO, COMMIT, FILES)
    env = _venv.noted(ctx, b.with_cpu_torch(ctx))
    path = ":".join(b.target_dir(ctx, req, env=env) for req in ("einops==0.8.1", "numpy==2.2.6"))
    res = _venv.run([env.python, "-c", LOAD, tree, attn_type],
                    env=_venv.tool_env(VIRTUAL_ENV=str(env.path), PYTHONPATH=path), cwd=_venv._tmp_root(), timeout=300)
    shown = [ln for ln in res.output.splitlines() if ln.startswith(("XFORMERS", "BLOCK", "max_abs")) or "no module 'xformers'" in ln]
    ctx.note(f"attn_type={attn_type!r}: " + " | ".join(ln.strip()[:120] for ln in shown) + f"; {_venv.last_exception(res.output, 200)}")
    return res


def reproduce(ctx):
    res = run(ctx, "vanilla-xformers")
    if "BLOCK MemoryEfficientAttnBlock" not in res.output:
        raise RuntimeError(f"the xformers block was not built: {res.tail(500)}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"], "NameError")


def fix_1(ctx):
    env = b.with_cpu_torch(ctx)
    res = env.python_run("import xformers, xformers.ops; print(xformers.__version__)")
    ctx.note(f"`python -c \"import xformers, xformers.ops; ...\"`: {_venv.last_exception(res.output, 200)}")

    def names_cause():
        if "No module named 'xformers'" not in res.output:
            raise AssertionError(f"the cause is not shown: {res.tail(300)}")
    ctx.call(names_cause)


def fix_2(ctx):
    res = run(ctx, "vanilla")
    ctx.call(_venv.finished, res, "max_abs_error", "AttnBlock's forward pass")
    ctx.call(_venv.within, ctx, res, "max_abs_error", "AttnBlock against its weights in float64", 1e-5)
