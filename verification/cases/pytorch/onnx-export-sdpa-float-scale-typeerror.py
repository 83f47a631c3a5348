"""torch.onnx.export's TorchScript exporter in torch 2.1-2.4 cannot translate
scaled_dot_product_attention called with a constant `scale`: its opset-14 symbolic turns the
scale into a Python float and the exporter's Constant node refuses it (TypeError, with the
exporter's "(Occurred when translating ...)" suffix).

The reproduce step (torch < 2.5; run on torch 2.4.1, CPU) exports a module that calls SDPA with
scale=0.125, as transformers' CLIPSdpaAttention does, at opsets 14 and 17; where transformers is
installed it also notes what a two-layer CLIPTextModel (config made in code, no download) with
SDPA attention gets. Fixes export for real and run the ONNX file with onnxruntime, compared with
the reference attention (fixes 1, 3) or the PyTorch model's own output (fix 2): fix 1 the same
module with the TorchScript exporter on torch 2.5 or newer, fix 2 the CLIP text model with
attn_implementation="eager" on the old torch, fix 3 the dynamo exporter (torch 2.5+, onnxscript)."""

import io
import os
import tempfile

from errkb.verify.case import Refuted, attempt
from verification.cases._common import ref_attention

BACKEND = "sdpa"
REQUIRES = {"packages": ["torch"]}
STEP_REQUIRES = {
    "reproduce": {"torch": "<2.5"},
    "fix_1": {"torch": ">=2.5", "packages": ["onnx", "onnxruntime"]},
    "fix_2": {"packages": ["transformers", "onnx", "onnxruntime"]},  # the TorchScript exporter of 2.4 needs onnx
    "fix_3": {"torch": ">=2.5", "packages": ["onnxscript", "onnxruntime"]},
}
TIMEOUT = 300
SCALE = 0.125  # CLIP's 1/sqrt(64)
FP32 = {"atol": 1e-4, "rtol": 1e-4}


def _module():
    import torch

    class Attention(torch.nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=SCALE)

    return Attention()


def _qkv(ctx):
    t = ctx.torch
    return tuple(t.randn(1, 2, 8, 64) for _ in range(3))


def _old_torch_export(model, args, f, **kw):
    """torch.onnx.export with the TorchScript exporter (dynamo=False where the argument exists)."""
    import inspect

    import torch

    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kw.setdefault("dynamo", False)
    return torch.onnx.export(model, args, f, **kw)


def _run_onnx(path_or_bytes, feeds):
    import onnxruntime as ort

    sess = ort.InferenceSession(path_or_bytes, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, {n: x.numpy() for n, x in zip(names, feeds)})


_saved: dict = {}


def _clip(attn):
    """A two-layer CLIP text encoder saved to a temporary folder once, then loaded as the fix
    says: CLIPTextModel.from_pretrained(path, attn_implementation=attn)."""
    import torch
    from transformers import CLIPTextConfig, CLIPTextModel

    if "path" not in _saved:
        torch.manual_seed(0)
        cfg = CLIPTextConfig(vocab_size=100, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=2, max_position_embeddings=16)
        _saved["path"] = tempfile.mkdtemp(prefix="errkb-clip-")
        CLIPTextModel(cfg).save_pretrained(_saved["path"])
    return CLIPTextModel.from_pretrained(_saved["path"], attn_implementation=attn).eval()


def reproduce(ctx):
    import torch

    q, k, v = _qkv(ctx)
    ctx.expect_error(_old_torch_export, _module(), (q, k, v), io.BytesIO(), opset_version=14)
    _, exc = attempt(_old_torch_export, _module(), (q, k, v), io.BytesIO(), opset_version=17)
    ctx.note("opset 17: " + ("exported" if exc is None else f"{type(exc).__name__}: ...{str(exc)[-90:]!r}"))
    try:
        import transformers
    except ImportError:
        return
    model, ids = _clip("sdpa"), torch.tensor([[1, 5, 7, 2]])
    _, exc = attempt(_old_torch_export, model, (ids,), io.BytesIO(), opset_version=17)
    ctx.note(f"CLIPTextModel (transformers {transformers.__version__}, sdpa), opset 17: "
             + ("exported" if exc is None else f"{type(exc).__name__}: ...{str(exc)[-160:]!r}"))


def fix_1(ctx):
    """torch 2.5+: the TorchScript exporter translates the same module; onnxruntime agrees."""
    q, k, v = _qkv(ctx)
    buf = io.BytesIO()
    ctx.call(_old_torch_export, _module(), (q, k, v), buf, opset_version=17)
    (out,) = ctx.call(_run_onnx, buf.getvalue(), (q, k, v))
    ctx.close(ctx.torch.from_numpy(out), ref_attention(q, k, v, layout="bhsd", scale=SCALE), **FP32)


def fix_2(ctx):
    """The CLIP text model loaded with eager attention exports on this torch; onnxruntime gives
    the model's own last hidden state."""
    t = ctx.torch
    model, ids = _clip("eager"), t.tensor([[1, 5, 7, 9, 2]])
    buf = io.BytesIO()
    ctx.call(_old_torch_export, model, (ids,), buf, opset_version=17, input_names=["input_ids"])
    outs = ctx.call(_run_onnx, buf.getvalue(), (ids,))
    with t.no_grad():
        want = model(ids).last_hidden_state
    ctx.close(t.from_numpy(outs[0]), want, **FP32)
    ops = _ops(buf.getvalue())
    ctx.note(f"torch {t.__version__}: exported graph has Softmax: {'Softmax' in ops}, MatMul: {'MatMul' in ops}")


def _ops(model_bytes):
    try:
        import onnx
    except ImportError:
        return set()
    return {n.op_type for n in onnx.load_from_string(model_bytes).graph.node}


def fix_3(ctx):
    """dynamo=True: the torch.export-based exporter; onnxruntime agrees with the reference."""
    import torch

    q, k, v = _qkv(ctx)
    path = os.path.join(tempfile.mkdtemp(prefix="errkb-onnx-"), "attn.onnx")
    ctx.call(torch.onnx.export, _module(), (q, k, v), path, dynamo=True)
    (out,) = ctx.call(_run_onnx, path, (q, k, v))
    ctx.close(torch.from_numpy(out), ref_attention(q, k, v, layout="bhsd", scale=SCALE), **FP32)
    if not os.path.getsize(path):
        raise Refuted("the exporter wrote an empty file")
