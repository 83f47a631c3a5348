"""torch.onnx.export's TorchScript exporter has no translation of scaled_dot_product_attention in
torch 2.0.x (any opset), and from torch 2.1 only at opset 14 and above: below that it raises
UnsupportedOperatorError ("... Support for this operator was added in version 14 ...").

Environments: PyPI's Linux wheels of torch 2.4.1, 2.5.1 and 2.0.1 (CUDA builds, which import on a
CPU machine), each installed by uv 0.9.0 into an environment of its own with onnx, onnxruntime and
numpy 1.26 pinned (2.0.1 also gets transformers 4.36.2, the first release with attn_implementation).
Every export and onnxruntime session runs in a child process of that environment; nothing is faked.

Reproduce: a module whose forward is F.scaled_dot_product_attention(q, k, v), exported with the
TorchScript exporter (dynamo=False where the argument exists) at opset 13 on torch 2.5.1 must raise
the record's message; the step notes what 2.4.1 prints for the same call. Where torch 2.0.1 can be
installed, the same module exported at opset 17 on 2.0.1 must raise it too (the record's first
claim), else the step refutes. Fix 1: the same export at opset 17 on 2.5.1 (and 2.4.1) succeeds and
onnxruntime's output matches torch's SDPA output and an fp64 reference (ATOL). Fix 2 (torch 2.0.1):
the explanation's own-code attention (softmax(q @ k^T * scale) @ v) exports at opset 17 and matches,
and a two-layer Llama made from a config in code, loaded with attn_implementation="eager" as the
fix's code says, exports and matches the model's own output (the step notes what "sdpa" gets)."""

import re

from errkb import templates
from errkb.verify.case import Refuted, Skip
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
PINS = ("onnx==1.17.0", "onnxruntime==1.20.1", "numpy==1.26.4")
NEW = "torch==2.5.1"
ALSO = "torch==2.4.1"
OLD = "torch==2.0.1"
TRANSFORMERS = "transformers==4.36.2"
ATOL = 1e-5  # float32 throughout; onnxruntime's MatMul/Softmax against torch's SDPA on the CPU

# One export of one attention module, then (when it worked) onnxruntime on the file.
EXPORT = '''
import inspect, io, torch
print("torch", torch.__version__)
OWN = {own}
class Attn(torch.nn.Module):
    def forward(self, q, k, v):
        if OWN:
            return torch.softmax(q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5, dim=-1) @ v
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)
kw = {{"dynamo": False}} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {{}}
print("exporter kwargs", kw)
torch.manual_seed(0)
q, k, v = (torch.randn(1, 2, 8, 16) for _ in range(3))
buf = io.BytesIO()
torch.onnx.export(Attn(), (q, k, v), buf, opset_version={opset}, input_names=["q", "k", "v"], **kw)
import onnx, onnxruntime as ort
ops = sorted({{n.op_type for n in onnx.load_from_string(buf.getvalue()).graph.node}})
sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
(out,) = sess.run(None, {{"q": q.numpy(), "k": k.numpy(), "v": v.numpy()}})
with torch.no_grad():
    mine = Attn()(q, k, v)
ref = torch.softmax(q.double() @ k.double().transpose(-2, -1) / 4.0, -1) @ v.double()
out = torch.from_numpy(out)
print("ops", " ".join(ops))
print("onnxruntime", ort.__version__, "onnx", onnx.__version__)
print("maxerr_torch", float((out - mine).abs().max()), "maxerr_ref", float((out.double() - ref).abs().max()))
'''

LLAMA = '''
import io, tempfile, torch, transformers
from transformers import LlamaConfig, LlamaModel
print("torch", torch.__version__, "transformers", transformers.__version__)
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=100, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=32)
with tempfile.TemporaryDirectory(prefix="errkb-llama-") as path:
    LlamaModel(cfg).save_pretrained(path)
    try:
        LlamaModel.from_pretrained(path, attn_implementation="sdpa")
        print("sdpa: loaded")
    except Exception as e:
        print("sdpa:", type(e).__name__, str(e)[:160].replace("\\n", " "))
    model = LlamaModel.from_pretrained(path, attn_implementation="eager").eval()
print("attn_implementation", model.config._attn_implementation)
ids = torch.tensor([[1, 5, 7, 9, 2]])
buf = io.BytesIO()
torch.onnx.export(model, (ids,), buf, opset_version=17, input_names=["input_ids"])
import onnxruntime as ort
sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
out = torch.from_numpy(sess.run(None, {"input_ids": ids.numpy()})[0])
with torch.no_grad():
    want = model(ids).last_hidden_state
print("llama_maxerr", float((out - want).abs().max()))
'''


def _env(ctx, requirement):
    more = (TRANSFORMERS,) if requirement == OLD else ()
    tool, env = b.uv_env(ctx, "onnx-" + requirement.replace("==", "-"), requirement, *PINS, *more)
    return env


def _export(ctx, requirement, opset, own=False):
    res = _env(ctx, requirement).python_run(EXPORT.format(opset=opset, own=own), timeout=600)
    version = re.search(r"^torch (\S+)", res.output, re.M)
    kw = re.search(r"^exporter kwargs (.*)$", res.output, re.M)
    ctx.note(f"torch {version.group(1) if version else '?'}, opset {opset}"
             + (" (own-code attention)" if own else "") + f", extra export arguments {kw.group(1) if kw else '?'}: "
             + ("timed out" if res.timed_out else f"exit {res.returncode}") + f"; {_venv.last_exception(res.output, 260)}")
    return res


def _errors(res):
    m = re.search(r"maxerr_torch (\S+) maxerr_ref (\S+)", res.output)
    if not m:
        _venv.reraise(res.output)
        raise AssertionError(res.tail(600))
    return float(m.group(1)), float(m.group(2))


def _exports(ctx, res, where):
    """A claimed-good export: it must finish, and onnxruntime must agree (checked by the caller)."""
    errs = ctx.call(_errors, res)
    ops = re.search(r"^ops (.*)$", res.output, re.M)
    ctx.note(f"{where}: exported; graph ops {ops.group(1) if ops else '?'}; onnxruntime vs torch max error "
             f"{errs[0]:.3g}, vs fp64 reference {errs[1]:.3g}")
    return errs


def _old_env_or_none(ctx):
    """torch 2.0.1's environment, or None (noted) where it cannot be installed here."""
    try:
        return _env(ctx, OLD)
    except Skip as exc:
        ctx.note(f"torch 2.0.1 part not run: {exc}")
        return None


def reproduce(ctx):
    _export(ctx, ALSO, 13)  # noted only: the same wording is expected from 2.1 on
    res = _export(ctx, NEW, 13)
    exc = ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])
    ctx.note(f"full message: {str(exc)[:300]}")
    # The record's first claim: torch 2.0.x has no translation at any opset (17 here).
    if _old_env_or_none(ctx) is None:
        return
    old = _export(ctx, OLD, 17)
    got = _venv.exception_lines(old.output)
    hit = [m for c, m in got if templates.search_regex(ctx.record["template"]).search(m)]
    if not hit or not got[-1][0].endswith("UnsupportedOperatorError"):
        raise Refuted(f"torch 2.0.1 at opset 17 did not raise the record's message: {_venv.last_exception(old.output, 300)}")
    ctx.note(f"torch 2.0.1, opset 17: {got[-1][0]}: {hit[-1][:300]}")


def fix_1(ctx):
    new = _export(ctx, NEW, 17)
    errs_new = _exports(ctx, new, "torch 2.5.1, opset 17")
    also = _export(ctx, ALSO, 17)
    errs_also = _exports(ctx, also, "torch 2.4.1, opset 17")
    ctx.close([*errs_new, *errs_also], [0.0] * 4, atol=ATOL, what="onnxruntime output against torch SDPA and fp64")


def fix_2(ctx):
    own = _export(ctx, OLD, 17, True)
    errs = _exports(ctx, own, "torch 2.0.1, own-code attention, opset 17")
    llama = _env(ctx, OLD).python_run(LLAMA, timeout=600)

    def llama_exports():
        m = re.search(r"llama_maxerr (\S+)", llama.output)
        if not m:
            _venv.reraise(llama.output)
            raise AssertionError(llama.tail(600))
        return float(m.group(1))

    err_llama = ctx.call(llama_exports)
    for line in llama.output.splitlines():
        if line.startswith(("torch ", "sdpa", "attn_implementation")):
            ctx.note(line[:300])
    ctx.note(f"two-layer Llama (eager), opset 17: onnxruntime vs the model's output max error {err_llama:.3g}")
    ctx.close([*errs, err_llama], [0.0] * 3, atol=ATOL, what="onnxruntime output (own attention, Llama eager)")
