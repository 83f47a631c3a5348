"""A checkpointed attention block whose keys also take reference tokens kept on the module (a
"bank", as RealisDance's reference attention keeps them), cleared at the end of the forward: the
backward's recomputation builds keys and values of another length than the forward's, and the SDPA
node's backward returns gradients of that length, which the autograd engine refuses with
"Function ScaledDotProduct...Backward0 returned an invalid gradient at index 1 - got [...] but
expected shape compatible with [...]".

How the rerun's key reaches the original node: non-reentrant torch.utils.checkpoint hands the
recomputed tensors to the original graph's saved-tensor slots. With its default determinism check
it compares their metadata first and stops with CheckpointError (the record says so; the step
notes it); with `determinism_check="none"` the node gets the shorter key and the engine's shape
check is what stops the run, as in the record. Reentrant checkpointing re-runs the block as a graph
of its own and raises nothing here (also noted: its gradients are silently those of the rerun).

On a GPU the tensors are fp16 and SDPA is restricted to the memory-efficient kernel, the node the
record quotes (ScaledDotProductEfficientAttentionBackward0); on a machine without one the same
block runs in fp32 on the CPU, where SDPA's node is ScaledDotProductFlashAttentionForCpuBackward0
(the template covers both; the step notes which). Fixes 1 and 2 run a training step and compare
the input's and the key projection's gradients with an fp32 copy of the block whose attention is
errkb's plain fp32 reference. Fix 3 runs the record's debug mode and checks that its log points at
the operator whose output changed (the torch.cat that appends the bank) and at its line in the
block's forward. Fix 4 (torch 2.1.0's compiled SDPA backward with a wider value) is run as the fix
says, on this torch: compiled, value head dim twice the query's, gradients against fp32 (GPU only,
as pytorch#110832 was)."""

import copy
import inspect

import torch
import torch.nn as nn

from errkb.verify.case import Refuted, attempt
from verification.cases._common import ref_attention
from verification.cases.pytorch._sdpa import gpu_if_any, only, sdpa

BACKEND = "sdpa"
REQUIRES = {"packages": ["torch"]}
STEP_REQUIRES = {"fix_4": {"cuda": True, "arch": "sm80+"}}
TIMEOUT = 600

DIM, HEADS, TOKENS = 64, 4, 128
FP16 = {"atol": 2e-2, "rtol": 2e-2}  # fp16 block and kernel against the fp32 reference
FP32 = {"atol": 1e-4, "rtol": 1e-4}


class RefBankAttention(nn.Module):
    """Self-attention whose keys and values are computed from the block's input followed by the
    reference tokens in `bank` (RealisDance's read mode: the reference UNet's tokens are
    concatenated onto each self-attention's keys)."""

    def __init__(self, attend, dim_v=DIM):
        super().__init__()
        self.to_q = nn.Linear(DIM, DIM)
        self.to_k = nn.Linear(DIM, DIM)
        self.to_v = nn.Linear(DIM, dim_v)
        self.to_out = nn.Linear(dim_v, DIM)
        self.bank = []
        self.attend = attend

    def forward(self, x):
        keys_from = torch.cat([x, *self.bank], dim=1)  # the tensor whose length depends on the bank
        b = x.shape[0]
        q = self.to_q(x).view(b, -1, HEADS, DIM // HEADS).transpose(1, 2)
        k = self.to_k(keys_from).view(b, -1, HEADS, DIM // HEADS).transpose(1, 2)
        v = self.to_v(keys_from).view(b, keys_from.shape[1], HEADS, -1).transpose(1, 2)
        out = self.attend(q, k, v)
        return self.to_out(out.to(x.dtype).transpose(1, 2).reshape(b, x.shape[1], -1))


def _fused(ctx):
    """SDPA as the block calls it: the memory-efficient kernel alone on a GPU, the default on the CPU."""
    if ctx.device == "cuda":
        def attend(q, k, v):
            with only("EFFICIENT_ATTENTION"):
                return sdpa(q, k, v)
        return attend
    return sdpa


def _reference(q, k, v):
    return ref_attention(q, k, v, layout="bhsd")


def _setup(ctx, dim_v=DIM):
    gpu_if_any(ctx)
    t = ctx.torch
    dtype = t.float16 if ctx.device == "cuda" else t.float32
    ctx.seed(0)
    block = RefBankAttention(_fused(ctx), dim_v).to(ctx.device, dtype)
    x = t.randn(1, TOKENS, DIM, device=ctx.device, dtype=dtype)
    ref_tokens = t.randn(1, TOKENS, DIM, device=ctx.device, dtype=dtype)
    upstream = t.randn(1, TOKENS, DIM, device=ctx.device, dtype=t.float32)
    return block, x, ref_tokens, upstream


def _grads(block, x):
    return x.grad.detach().float(), block.to_k.weight.grad.detach().float()


def _reference_grads(block, x, ref_tokens, upstream):
    """The same block in fp32 with the plain reference attention, no checkpointing, the bank in place
    for the whole step: the gradients a correct training step computes."""
    ref = copy.deepcopy(block).float()
    ref.attend = _reference
    ref.zero_grad(set_to_none=True)
    ref.bank = [ref_tokens.float()]
    xr = x.detach().float().requires_grad_()
    (ref(xr).float() * upstream).sum().backward()
    return _grads(ref, xr)


def _close_grads(ctx, got, want):
    tol = FP16 if ctx.device == "cuda" else FP32
    ctx.close(got[0], want[0], what="input gradient", **tol)
    ctx.close(got[1], want[1], what="to_k.weight gradient", **tol)


def _checkpointed_step(block, x, ref_tokens, upstream, clear_before_backward=True, **checkpoint_kwargs):
    """RealisDance's order: the forward (checkpointed) reads the bank, the bank is cleared when the
    forward ends, then loss.backward() re-runs the block."""
    from torch.utils.checkpoint import checkpoint

    block.bank = [ref_tokens]
    y = checkpoint(block, x, **checkpoint_kwargs)
    if clear_before_backward:
        block.bank = []
    (y.float() * upstream).sum().backward()
    block.bank = []
    return y


def reproduce(ctx):
    block, x, ref_tokens, upstream = _setup(ctx)
    ctx.note(f"{ctx.device}, {x.dtype}; SDPA " + ("memory-efficient kernel only" if ctx.device == "cuda" else "default"))
    for kwargs in ({"use_reentrant": False}, {"use_reentrant": True}):
        _, exc = attempt(_checkpointed_step, block, x.clone().requires_grad_(), ref_tokens, upstream, **kwargs)
        what = "no error" if exc is None else f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
        ctx.note(f"checkpoint({kwargs}) with the bank cleared before backward: {what}")
        block.zero_grad(set_to_none=True)
    exc = ctx.expect_error(_checkpointed_step, block, x.clone().requires_grad_(), ref_tokens, upstream,
                           use_reentrant=False, determinism_check="none")
    ctx.note("node: " + str(exc).split(" returned", 1)[0])


def fix_1(ctx):
    # Keep the bank until backward has finished (cleared after loss.backward()).
    block, x, ref_tokens, upstream = _setup(ctx)
    want = _reference_grads(block, x, ref_tokens, upstream)
    x = x.clone().requires_grad_()
    ctx.call(_checkpointed_step, block, x, ref_tokens, upstream, clear_before_backward=False, use_reentrant=False)
    _close_grads(ctx, _grads(block, x), want)


def fix_2(ctx):
    # No gradient checkpointing; the bank is still cleared at the end of the forward, as before.
    block, x, ref_tokens, upstream = _setup(ctx)
    want = _reference_grads(block, x, ref_tokens, upstream)
    x = x.clone().requires_grad_()

    def step():
        block.bank = [ref_tokens]
        y = block(x)
        block.bank = []
        (y.float() * upstream).sum().backward()

    ctx.call(step)
    _close_grads(ctx, _grads(block, x), want)


def fix_3(ctx):
    """set_checkpoint_debug_enabled(True) with non-reentrant checkpointing: the step stops with the
    checkpoint's own report, which must list the original forward's and the recomputation's
    operators and put the first difference at the bank's torch.cat, with its line in forward."""
    import torch.utils.checkpoint as cp

    block, x, ref_tokens, upstream = _setup(ctx)
    with cp.set_checkpoint_debug_enabled(True):
        _, exc = attempt(_checkpointed_step, block, x.clone().requires_grad_(), ref_tokens, upstream,
                         use_reentrant=False)
    if exc is None:
        raise Refuted("the debug run finished without reporting the changed recomputation")
    text = str(exc)
    if ctx._matches_record(exc, [c.__name__ for c in type(exc).__mro__], text):
        ctx.observed = {"class": type(exc).__name__, "message": text[:2000]}
        raise Refuted("the debug run still ends in the record's error")
    if type(exc).__name__ != "CheckpointError":
        ctx.observed = {"class": type(exc).__name__, "message": text[:2000]}
        raise Refuted(f"the debug run raised {type(exc).__name__}, not the checkpoint's report")
    original = text.split("1. Stack traces of the operators that ran in the original forward", 1)[-1]
    original, _, recompute = original.partition("2. Stack traces of the operators that ran during recomputation")
    first_orig = next((ln for ln in original.splitlines() if ln.startswith("$")), "")
    first_rec = next((ln for ln in recompute.splitlines() if ln.startswith("$")), "")
    lines, start = inspect.getsourcelines(RefBankAttention.forward)
    cat_line = start + next(i for i, ln in enumerate(lines) if "torch.cat" in ln)
    site = f"{inspect.getsourcefile(RefBankAttention)}:{cat_line}:forward"
    ctx.observed = {"class": "CheckpointError", "message": text[-600:], "first_original": first_orig,
                    "first_recompute": first_rec, "site": site}
    shape = lambda ln: ln.split(" = ", 1)[0].split(": ", 1)[-1]  # noqa: E731 - "f16[1, 256, 64]"
    if "aten.cat" not in first_orig or "aten.cat" not in first_rec or shape(first_orig) == shape(first_rec):
        raise Refuted(f"the report's first operators do not show the cat changing: {first_orig!r} / {first_rec!r}")
    cat_trace = original.split(first_orig, 1)[-1].split("\n$", 1)[0]  # the frames printed under that operator
    if site not in cat_trace:
        raise Refuted(f"the original forward's cat has no stack frame at {site}")
    ctx.note(f"report: {first_orig.strip()} in the forward, {first_rec.strip()} in the recomputation; "
             f"its stack names {site.split('/')[-1]}")


def fix_4(ctx):
    """Compiled block, value head dim twice the query's (pytorch#110832's shape), on this torch."""
    block, x, ref_tokens, upstream = _setup(ctx, dim_v=2 * DIM)
    block.attend = sdpa  # SDPA's own choice of kernel, as in the report
    want = _reference_grads(block, x, ref_tokens, upstream)
    torch._dynamo.reset()
    compiled = torch.compile(block)
    x = x.clone().requires_grad_()

    def step():
        block.bank = [ref_tokens]
        y = compiled(x)
        (y.float() * upstream).sum().backward()
        block.bank = []

    ctx.call(step)
    ctx.note(f"torch {torch.__version__}: torch.compile, v head dim {2 * DIM // HEADS} vs q/k {DIM // HEADS}")
    _close_grads(ctx, _grads(block, x), want)
