"""FlashAttention's Triton prototype (flash_attn/flash_attn_triton.py) asserts, without a message,
that q, k and v are CUDA tensors; called on CPU tensors it stops there, and Python shows the
statement `assert q.is_cuda and k.is_cuda and v.is_cuda`.

The real file is used: flash_attn_triton.py of the flash-attn tree on the path (git tag v2.8.3's
Python files; loaded from its file, without importing flash_attn, whose __init__ needs the compiled
flash_attn_2_cuda), which needs torch and triton to import. The steps call its public
flash_attn_qkvpacked_func, as MosaicBERT's and DNABERT-2's bert_layers.py do, with packed fp16
(batch, seqlen, 3, heads, head_dim) tensors and no bias. An assert without a message gives an
empty AssertionError; the step reads the statement from the traceback's last source line, which
is what Python prints and what users paste. Fix 1 needs a GPU; fix 2 runs the same inputs through
plain PyTorch attention, the path these models take when flash_attn_qkvpacked_func is None."""

import importlib.util
import traceback

from verification.cases._flash_attn_triton import prototype_path

BACKEND = "triton"
REQUIRES = {"packages": ["torch", "triton"]}
STEP_REQUIRES = {"fix_1": {"cuda": True}}
TIMEOUT = 300


def _prototype(ctx):
    path = prototype_path(ctx)
    module_spec = importlib.util.spec_from_file_location("errkb_flash_attn_triton", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    ctx.note(f"flash_attn_qkvpacked_func of {path}")
    return module


def _qkv(ctx, device):
    torch = ctx.torch
    ctx.seed(0)
    return torch.randn(2, 64, 3, 4, 32, dtype=torch.float16, device=device)


def _with_statement(fn, *args):
    """Call fn; an AssertionError without a message comes back carrying its statement, as Python
    prints it in the traceback."""
    try:
        return fn(*args)
    except AssertionError as exc:
        if str(exc):
            raise
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        raise AssertionError((frame.line or "").strip()) from exc


def reproduce(ctx):
    module = _prototype(ctx)
    ctx.expect_error(_with_statement, module.flash_attn_qkvpacked_func, _qkv(ctx, "cpu"))


def fix_1(ctx):
    module = _prototype(ctx)
    qkv = _qkv(ctx, "cuda")
    out = ctx.call(_with_statement, module.flash_attn_qkvpacked_func, qkv)
    from errkb.verify.reference import attention

    ctx.close(out, attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]), atol=2e-2, rtol=2e-2)


def fix_2(ctx):
    # The PyTorch path: scores, softmax and the weighted sum on the CPU, in float32.
    torch = ctx.torch
    qkv = _qkv(ctx, "cpu").float()
    q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))

    def plain(q, k, v):
        weights = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1)
        return weights @ v

    out = ctx.call(plain, q, k, v)
    from errkb.verify.reference import attention

    ctx.close(out, attention(q, k, v, layout="bhsd"), atol=1e-4, rtol=1e-4)
