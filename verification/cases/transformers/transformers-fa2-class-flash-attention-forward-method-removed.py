"""A patch that calls self._flash_attention_forward on a transformers FlashAttention-2 class stops on
4.43.0 and later: "'Qwen2FlashAttention2' object has no attribute '_flash_attention_forward'".

In a child process with torch 2.13.0+cpu (with_cpu_torch, local wheel) and one transformers release (a
`pip --target` folder): a Qwen2FlashAttention2 layer is built from a small Qwen2Config (width 64, 4 heads,
2 key/value heads) and its forward is replaced, as xtuner 0.1.x's dispatch files do, by a function written
here that projects q, k and v and hands them to the FlashAttention helper. flash-attn is not installed
(its kernels need a GPU), so the name the helper calls, `flash_attn_func`, is given a stand-in in the
helper's module: plain causal softmax attention in float64 that records the `causal` flag it got (and, on
4.43, `_flash_supports_window_size = False`, which that module defines only when flash-attn imports). The
patched layer's output is then compared with a float64 causal attention of the same projections.

The class lists are read from the release's files (ast): every class named *FlashAttention2 in
transformers/models/*/modeling_*.py, and whether it defines _flash_attention_forward.

Reproduce: on 4.43.0 the patched forward raises the record's AttributeError (no FlashAttention2 class
of that release defines the method). Fix 1: on 4.42.4 every FlashAttention2 class defines it and the
patched forward runs through it. Fix 3: on 4.43.0 the patch written as the fix says (the module-level
helper with is_causal and use_top_left_mask) runs. Fix 2 (xtuner 0.2) is not run: xtuner pulls
mmengine, deepspeed and transformers 4.48.0's training stack."""

import json

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200

CHILD = r'''
import ast, glob, json, os, sys, torch, transformers
MODE = {mode!r}
root = os.path.dirname(transformers.__file__)
with_method, without = [], []
for path in sorted(glob.glob(os.path.join(root, "models", "*", "modeling_*.py"))):
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, ast.ClassDef) and node.name.endswith("FlashAttention2"):
            defs = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
            (with_method if "_flash_attention_forward" in defs else without).append(node.name)
print("CLASSES", json.dumps(dict(version=transformers.__version__, with_method=len(with_method), without=len(without),
      example_without=without[:5])), flush=True)

from transformers import Qwen2Config
from transformers.models.qwen2 import modeling_qwen2 as mq
seen = {}
def standin(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, **kw):
    seen.update(causal=causal, extra=sorted(kw))
    rep = q.shape[2] // k.shape[2]
    qd, kd, vd = (x.double().transpose(1, 2) for x in (q, k.repeat_interleave(rep, 2), v.repeat_interleave(rep, 2)))
    s = qd @ kd.transpose(-1, -2) * (softmax_scale or q.shape[-1] ** -0.5)
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
    return (s.softmax(-1) @ vd).transpose(1, 2).to(q.dtype)
if MODE == "method":
    mq.flash_attn_func = standin
else:
    import transformers.modeling_flash_attention_utils as fau
    fau.flash_attn_func = standin
    fau._flash_supports_window_size = False

cfg = Qwen2Config(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=4,
                  num_key_value_heads=2, max_position_embeddings=64)
torch.manual_seed(0)
layer = mq.Qwen2FlashAttention2(cfg, layer_idx=0).eval()

def project(self, x):
    b, n, _ = x.shape
    q = self.q_proj(x).view(b, n, self.num_heads, self.head_dim)
    k = self.k_proj(x).view(b, n, self.num_key_value_heads, self.head_dim)
    v = self.v_proj(x).view(b, n, self.num_key_value_heads, self.head_dim)
    return q, k, v

def patched_forward(self, hidden_states, attention_mask=None, **kwargs):
    # what a dispatch patch of 4.36-4.42 does: its own projections, then the class's FlashAttention method
    q, k, v = project(self, hidden_states)
    n = hidden_states.shape[1]
    if MODE == "method":
        out = self._flash_attention_forward(q, k, v, attention_mask, n, dropout=0.0)
    else:
        from transformers.modeling_flash_attention_utils import _flash_attention_forward
        out = _flash_attention_forward(q, k, v, attention_mask, n, is_causal=self.is_causal, dropout=0.0,
                                       use_top_left_mask=self._flash_attn_uses_top_left_mask)
    return self.o_proj(out.reshape(hidden_states.shape[0], n, -1)), None, None

mq.Qwen2FlashAttention2.forward = patched_forward
x = torch.randn(2, 8, 64)
with torch.no_grad():
    out = layer(x)[0]
    q, k, v = project(layer, x)
    ref = layer.o_proj(standin(q, k, v, causal=True).reshape(2, 8, -1))
print("RAN", json.dumps(dict(seen=seen, maxdiff=float((out - ref).abs().max()))), flush=True)
'''

_runs: dict = {}


def _run(ctx, release: str, mode: str) -> _venv.Run:
    key = (release, mode)
    if key not in _runs:
        _runs[key] = b.run_with_release(ctx, CHILD.replace("{mode!r}", repr(mode)), release)
    res = _runs[key]
    ctx.note(f"{release}: FlashAttention2 classes: {_line(res, 'CLASSES ')}")
    ran = _line(res, "RAN ")
    what = "self._flash_attention_forward(...)" if mode == "method" else "the module-level _flash_attention_forward"
    ctx.note(f"{release}: a Qwen2FlashAttention2 whose patched forward calls {what}: "
             + (f"ran, {ran}" if ran else _venv.last_exception(res.output, 300)))
    return res


def _line(res: _venv.Run, prefix: str) -> str | None:
    return next((line[len(prefix):] for line in res.output.splitlines() if line.startswith(prefix)), None)


def _classes(res: _venv.Run) -> dict:
    line = _line(res, "CLASSES ")
    if line is None:
        raise AssertionError(f"the child did not list the classes: {res.tail(500)}")
    return json.loads(line)


def reproduce(ctx):
    res = _run(ctx, "transformers==4.43.0", "method")
    if _classes(res)["with_method"]:
        raise AssertionError(f"4.43.0 still has the method on some classes: {_classes(res)}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def _ran(ctx, res: _venv.Run) -> float:
    _venv.reraise(res.output, ctx.record["template"])
    line = _line(res, "RAN ")
    if line is None:
        _venv.reraise(res.output)
        raise AssertionError(res.tail(500))
    got = json.loads(line)
    if got["seen"].get("causal") is not True:
        raise AssertionError(f"flash_attn_func was not called as causal attention: {got}")
    return got["maxdiff"]


def fix_1(ctx):
    res = _run(ctx, "transformers==4.42.4", "method")
    counts = _classes(res)
    if counts["without"] or not counts["with_method"]:
        raise AssertionError(f"not every FlashAttention2 class of 4.42.4 defines the method: {counts}")
    diff = ctx.call(_ran, ctx, res)
    ctx.close([diff], [0.0], atol=1e-5, what="patched layer against float64 causal attention")


def fix_2(ctx):
    ctx.skip("xtuner 0.2.0 needs mmengine, deepspeed and transformers 4.48.0's training stack; not installed here")


def fix_3(ctx):
    res = _run(ctx, "transformers==4.43.0", "helper")
    diff = ctx.call(_ran, ctx, res)
    ctx.close([diff], [0.0], atol=1e-5, what="patched layer against float64 causal attention")
