"""Stability-AI's sgm (generative-models) prints "Attention mode 'softmax-xformers' is not available.
Falling back to native attention. ..." for every transformer block built with the xformers mode while
xformers does not import, and builds the block with plain attention (torch's SDPA) instead.

Environment: a new virtual environment with torch 2.13.0+cpu (local wheel), einops and packaging (PyPI,
which sgm/modules/attention.py imports); xformers not installed. Stability-AI/generative-models at
0ad7de9 (newest read; logger warning) and at 45c443b (the commit web UIs pin; print), the `sgm` folder
exported from a local clone by verification/cases/_downstream.py. sgm/__init__.py imports the whole model
zoo (Lightning, OpenCLIP, ...), so the child registers `sgm`, `sgm.modules` and
`sgm.modules.diffusionmodules` as bare packages pointing at the exported folders and imports
sgm/modules/attention.py under its own name (at 45c443b it imports diffusionmodules/util.py, which needs
only torch and einops): the files run unchanged, the package __init__ files do not run. The logger 'sgm.modules.attention' is tapped.

Reproduce: BasicTransformerBlock(64, 4, 16, context_dim=32, attn_mode="softmax-xformers") logs the
record's warning at WARNING at 0ad7de9 and prints it at 45c443b; at both commits its attention layers are
CrossAttention. Fix 1: the block built that way computes, in its self- and cross-attention layers,
what an fp64 reference of softmax(QK^T/sqrt(d))V with the layers' own weights gives (within 1e-5), on
torch 2.13. Fix 2: attn_mode="softmax" (the config change) builds the same block without the
message, and its output equals the fallback block's with the same weights. Fix 3 (make xformers
importable) needs a CUDA torch and an xformers wheel: skipped."""

import json

from verification.cases import _builds as b
from verification.cases import _downstream, _venv
from verification.cases import _tiny_llama as llama

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
REPO = "Stability-AI/generative-models"
NEWEST = "0ad7de9a5cb53fd63d6d30a4f385485e72e08597"
PINNED = "45c443b316737a4ab6e40413d7794a7f5657c19f"
LOGGER = "sgm.modules.attention"

CHILD = r'''
import json, logging, sys, types
MODE, ROOT = sys.argv[1], sys.argv[2]
class _ErrkbTap(logging.Handler):
    def emit(self, record):
        print("ERRKB-LOG", record.levelname, record.name, repr(record.getMessage()), flush=True)
logging.getLogger("sgm.modules.attention").addHandler(_ErrkbTap())
for name, sub in (("sgm", "/sgm"), ("sgm.modules", "/sgm/modules"), ("sgm.modules.diffusionmodules", "/sgm/modules/diffusionmodules")):
    pkg = types.ModuleType(name)
    pkg.__path__ = [ROOT + sub]
    sys.modules[name] = pkg
import importlib.util, torch
print("XFORMERS findable:", importlib.util.find_spec("xformers") is not None, flush=True)
from sgm.modules.attention import BasicTransformerBlock, CrossAttention
torch.manual_seed(0)
mode = "softmax-xformers" if MODE == "fallback" else "softmax"
print("BUILDING", mode, flush=True)
blk = BasicTransformerBlock(64, 4, 16, context_dim=32, attn_mode=mode, checkpoint=False).eval()
print("BUILT", flush=True)
x, ctx = torch.randn(2, 16, 64), torch.randn(2, 8, 32)
def ref(layer, x, c):
    w = {k: v.double() for k, v in layer.state_dict().items()}
    B, h = x.shape[0], layer.heads
    q = (x.double() @ w["to_q.weight"].T).reshape(B, -1, h, 16).transpose(1, 2)
    k = (c.double() @ w["to_k.weight"].T).reshape(B, -1, h, 16).transpose(1, 2)
    v = (c.double() @ w["to_v.weight"].T).reshape(B, -1, h, 16).transpose(1, 2)
    o = (torch.softmax(q @ k.transpose(-2, -1) / 16 ** 0.5, -1) @ v).transpose(1, 2).reshape(B, -1, h * 16)
    return o @ w["to_out.0.weight"].T + w["to_out.0.bias"]
with torch.no_grad():
    errs = [float((blk.attn1(x).double() - ref(blk.attn1, x, x)).abs().max()),
            float((blk.attn2(x, context=ctx).double() - ref(blk.attn2, x, ctx)).abs().max())]
    out = blk(x, context=ctx)
    saved = ROOT + "/sgm-fallback-block.pt"
    same = None
    if MODE == "fallback":
        torch.save({"state": blk.state_dict(), "x": x, "ctx": ctx, "out": out}, saved)
    else:
        import os
        if os.path.exists(saved):
            got = torch.load(saved)
            blk.load_state_dict(got["state"])
            same = float((blk(got["x"], context=got["ctx"]) - got["out"]).abs().max())
print("RESULT", json.dumps({"classes": [type(blk.attn1).__name__, type(blk.attn2).__name__], "errs": errs,
                            "shape": list(out.shape), "same": same}), flush=True)
'''

_runs: dict = {}


def _run(ctx, mode: str, commit: str) -> tuple[_venv.Run, dict]:
    key = (mode, commit)
    if key not in _runs:
        env = _venv.venv(ctx, "cpu-torch-einops", pip=b.PIP, install=[*b.cpu_torch_requirement(), "einops", "packaging"])
        _venv.noted(ctx, env)
        root = _downstream.tree(ctx, REPO, commit, ("sgm",))
        code = CHILD.replace("sys.argv[1], sys.argv[2]", f"{mode!r}, {str(root)!r}")
        _runs[key] = b.run_with_torch(ctx, code, env=env)
    res = _runs[key]
    _venv.reraise(res.output)
    found = [line[7:] for line in res.output.splitlines() if line.startswith("RESULT ")]
    if not found:
        raise AssertionError(f"{mode} at {commit[:7]}: the child printed no result: {res.tail(600)}")
    return res, json.loads(found[-1])


def _messages(ctx, res) -> list[str]:
    """Lines of the child's output (printed, or logged through the tap) that are the record's message."""
    texts = llama.logged(res.output) + [line for line in res.output.splitlines() if not line.startswith("ERRKB-LOG ")]
    return [t for t in texts if _venv.tool_message(t, ctx.record["template"])]


def reproduce(ctx):
    old, old_result = _run(ctx, "fallback", PINNED)
    printed = [line for line in old.output.splitlines() if not line.startswith("ERRKB-LOG ") and _venv.tool_message(line, ctx.record["template"])]
    ctx.note(f"45c443b printed {len(printed)} line(s): {printed[:1]}; attention classes {old_result['classes']}")
    if not printed:
        ctx.observed = {"class": None, "message": None, "commit": PINNED}
        from errkb.verify.case import Refuted
        raise Refuted("45c443b printed no such line")
    res, result = _run(ctx, "fallback", NEWEST)
    ctx.note(f"0ad7de9: {next(iter(llama.logged(res.output)), 'nothing logged')[:300]}; attention classes {result['classes']}")
    ctx.expect_logged(LOGGER, llama.relog, res.output)
    if result["classes"] != ["CrossAttention", "CrossAttention"] or old_result["classes"] != result["classes"]:
        raise AssertionError(f"the fallback block was not built with CrossAttention: {old_result['classes']} {result['classes']}")


def fix_1(ctx):
    res, result = _run(ctx, "fallback", NEWEST)
    ctx.note(f"fallback block's self- and cross-attention against fp64: {result['errs']}")
    ctx.close(result["errs"], [0.0, 0.0], atol=1e-5, what="the fallback CrossAttention layers against an fp64 reference")


def fix_2(ctx):
    _run(ctx, "fallback", NEWEST)  # saves the fallback block's weights for the comparison

    def plain():
        res, result = _run(ctx, "softmax", NEWEST)
        hits = _messages(ctx, res)
        if hits:
            raise _venv.ToolMessage(hits[0])
        return result

    result = ctx.call(plain)
    ctx.note(f"attn_mode='softmax': classes {result['classes']}, nothing logged or printed; "
             f"output against the fallback block with the same weights: {result['same']}")
    if result["same"] is None:
        raise AssertionError("the fallback block's weights were not found for the comparison")
    ctx.close([result["same"]], [0.0], atol=1e-6, what="attn_mode 'softmax' against the fallback block, same weights")


def fix_3(ctx):
    ctx.skip("installs an xformers wheel built for a CUDA torch (and, in a web UI, starts it with --xformers)")
