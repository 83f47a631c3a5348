"""DINOv2's layers warn "xFormers is not available (Attention)" (and "(Block)", "(SwiGLU)") when their
xformers import raises ImportError, and then run plain PyTorch attention.

Environment: a new virtual environment with torch 2.13.0+cpu (local wheel) and numpy (PyPI, which
dinov2/models/vision_transformer.py imports); xformers not installed. facebookresearch/dinov2 at commit
b8931f7 (the newest commit read for the record), the `dinov2` package exported from a local clone by
verification/cases/_downstream.py and put on PYTHONPATH; nothing of it is committed here. A child
records the warnings with warnings.catch_warnings and prints them as Python prints warnings.

Reproduce: `import dinov2.layers` warns the record's UserWarning three times (Attention, Block, SwiGLU;
the step notes the file and line of each). Fix 1: with the fix's filter installed first, the same import
warns nothing, and MemEffAttention (dim 64, 4 heads) then computes attention within 1e-5 of an fp64
reference built from its own qkv and proj weights (the meaning's "same result" claim). Fix 2 (install an
xformers built for the torch in use) needs a CUDA torch and an xformers wheel: skipped. Fix 3: a small
ViT-S/14 from dinov2.models.vision_transformer (img_size 56) given a list of two crop batches with one
mask each stops with AssertionError 'xFormers is required for using nested tensors' (the meaning's
claim); the fix's per-tensor loop runs both batches and returns the CLS features."""

import json

from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _downstream, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
REPO = "facebookresearch/dinov2"
COMMIT = "b8931f7bf91576930313be2c6d6af376033b35f0"

CHILD = r'''
import json, sys, warnings
MODE = sys.argv[1]
def show(caught):
    for w in caught:
        print(f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}", flush=True)
warnings.simplefilter("always")
if MODE == "filtered":
    warnings.filterwarnings("ignore", message=r"xFormers is (not )?available")
with warnings.catch_warnings(record=True) as caught:
    import dinov2.layers
show(caught)
import importlib.util, torch
print("XFORMERS findable:", importlib.util.find_spec("xformers") is not None, flush=True)
from dinov2.layers import MemEffAttention
torch.manual_seed(0)
if MODE in ("import", "filtered"):
    m = MemEffAttention(64, num_heads=4, qkv_bias=True).eval()
    x = torch.randn(2, 16, 64)
    with torch.no_grad():
        out = m(x)
        B, N, C = x.shape
        w = {k: v.double() for k, v in m.state_dict().items()}
        qkv = (x.double() @ w["qkv.weight"].T + w["qkv.bias"]).reshape(B, N, 3, 4, C // 4).permute(2, 0, 3, 1, 4)
        att = torch.softmax(qkv[0] @ qkv[1].transpose(-2, -1) / (C // 4) ** 0.5, -1) @ qkv[2]
        ref = att.transpose(1, 2).reshape(B, N, C) @ w["proj.weight"].T + w["proj.bias"]
    print("RESULT", json.dumps({"maxerr": float((out.double() - ref).abs().max())}), flush=True)
elif MODE == "lists":
    from dinov2.models.vision_transformer import vit_small
    model = vit_small(patch_size=14, img_size=56, block_chunks=0, init_values=1.0).eval()
    global_crops, local_crops = torch.randn(2, 3, 56, 56), torch.randn(3, 3, 28, 28)
    nested = None
    with torch.no_grad():
        try:
            model.forward_features([global_crops, local_crops], [None, None])
        except AssertionError as e:
            nested = str(e)
        feats = [model.forward_features(x) for x in (global_crops, local_crops)]
    print("RESULT", json.dumps({"nested": nested, "cls": [list(f["x_norm_clstoken"].shape) for f in feats]}), flush=True)
'''

_runs: dict = {}


def _run(ctx, mode: str) -> tuple[_venv.Run, dict]:
    if mode not in _runs:
        env = _venv.venv(ctx, "cpu-torch-numpy", pip=b.PIP, install=[*b.cpu_torch_requirement(), "numpy"])
        _venv.noted(ctx, env)
        root = _downstream.tree(ctx, REPO, COMMIT, ("dinov2",))
        _runs[mode] = b.run_with_torch(ctx, CHILD.replace("sys.argv[1]", repr(mode)), env=env, path=[root])
    res = _runs[mode]
    ctx.note(next((line for line in res.output.splitlines() if line.startswith("XFORMERS ")), "xformers: not printed"))
    _venv.reraise(res.output)
    found = [line[7:] for line in res.output.splitlines() if line.startswith("RESULT ")]
    if not found:
        raise AssertionError(f"{mode}: the child printed no result: {res.tail(600)}")
    return res, json.loads(found[-1])


def _record_warnings(ctx, res) -> list[str]:
    return [m for _, m in _venv.warning_lines(res.output) if _venv.tool_message(m, ctx.record["template"])]


def reproduce(ctx):
    res, result = _run(ctx, "import")
    lines = [line.split(": UserWarning", 1)[0].rsplit("/dinov2/", 1)[-1] for line in res.output.splitlines()
             if ": UserWarning: xFormers" in line]
    ctx.note(f"warned at {lines}: {_record_warnings(ctx, res)}")
    ctx.expect_warning(b.reemit_warnings, res.output)


def fix_1(ctx):
    res, result = ctx.call(_run, ctx, "filtered")
    hits = _record_warnings(ctx, res)
    if hits:
        ctx.observed = {"class": "UserWarning", "message": hits[0]}
        raise Refuted("the filtered import still warns")
    ctx.note("with the filter installed: no xFormers warning; MemEffAttention max error against fp64 "
             f"{result['maxerr']:.2e}")
    ctx.close([result["maxerr"]], [0.0], atol=1e-5, what="MemEffAttention's fallback against an fp64 reference")


def fix_2(ctx):
    ctx.skip("installs an xformers wheel built for a CUDA torch and uses its kernels on an NVIDIA GPU")


def fix_3(ctx):
    res, result = ctx.call(_run, ctx, "lists")
    ctx.note(f"list of crops: AssertionError {result['nested']!r}; per tensor: CLS features {result['cls']}")
    if result["nested"] != "xFormers is required for using nested tensors":
        ctx.observed = {"class": None, "message": None, "nested": result["nested"]}
        raise Refuted("the nested-tensor path did not stop with the assertion the record names")
    if result["cls"] != [[2, 384], [3, 384]]:
        raise AssertionError(f"unexpected feature shapes: {result['cls']}")
