"""SDPA's fused-kernel operators (flash, memory-efficient, cuDNN) have no CPU kernel: calling one
of them directly with CPU tensors makes the dispatcher refuse.

The reproduce step calls the record's fix-1 "before" line (_scaled_dot_product_efficient_attention)
on CPU tensors and notes what the other internal ops the record names answer. Fix 2 exports with
CPU example inputs and runs the program on the CPU; where a GPU is present it also notes (no
verdict: the record leaves it unchecked) which SDPA op a program exported on CUDA holds and
whether it runs on CPU tensors. Fix 3 calls the same internal op on CUDA tensors. The control is
the CPU's own fused op, which the record says the public function uses on the CPU."""

from verification.cases.pytorch._sdpa import qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"packages": ["torch"]}
STEP_REQUIRES = {"fix_3": {"cuda": True}}
FP32 = {"atol": 1e-3, "rtol": 1e-3}  # float32 kernels against the float32 reference


def _inputs(ctx):
    return qkv(ctx, d=64, dtype=ctx.torch.float32)


def _efficient(q, k, v):
    import torch

    return torch.ops.aten._scaled_dot_product_efficient_attention(q, k, v, None, False)[0]


def _others(t, q, k, v):
    """The other internal ops the record names, with the arguments each takes."""
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))  # (batch, seqlen, heads, dim) for the *_forward ops
    n = q.size(-2)
    aten = t.ops.aten
    return {
        "_flash_attention_forward": lambda: aten._flash_attention_forward(qt, kt, vt, None, None, n, n, 0.0,
                                                                          False, False),
        "_efficient_attention_forward": lambda: aten._efficient_attention_forward(qt, kt, vt, None, None, None,
                                                                                  None, None, 0.0, 0, False),
        "_scaled_dot_product_flash_attention": lambda: aten._scaled_dot_product_flash_attention(q, k, v),
        "_scaled_dot_product_cudnn_attention": lambda: aten._scaled_dot_product_cudnn_attention(q, k, v, None,
                                                                                                False),
    }


def reproduce(ctx):
    from errkb.verify.case import attempt, match_message

    t = ctx.torch
    q, k, v = _inputs(ctx)
    for name, fn in _others(t, q, k, v).items():
        _, exc = attempt(fn)
        if exc is None:
            ctx.note(f"{name} on CPU: runs")
        else:
            how = match_message(ctx.record["template"], str(exc)) if isinstance(exc, NotImplementedError) else None
            ctx.note(f"{name} on CPU: {type(exc).__name__} (template match: {how}): {str(exc).splitlines()[0][:160]}")
    ctx.expect_error(_efficient, q, k, v)


def fix_1(ctx):
    from verification.cases._common import ref_attention

    q, k, v = _inputs(ctx)
    out = ctx.call(sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **FP32)


def _attention_module():
    """A module around the public SDPA call, as a model's attention block has it."""
    import torch

    class Attention(torch.nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    return Attention()


def _sdpa_ops(ep):
    return sorted({str(n.target) for n in ep.graph.nodes
                   if n.op == "call_function" and "attention" in str(n.target)})


def _note_cuda_export(ctx, q, k, v):
    """Not part of the verdict: the fix's "before" (export on CUDA), then run on CPU tensors."""
    from errkb.verify.case import attempt

    t = ctx.torch
    if not t.cuda.is_available():
        ctx.note("no GPU here: the CUDA-exported program was not tried")
        return
    ep, exc = attempt(t.export.export, _attention_module(), tuple(x.cuda() for x in (q, k, v)))
    if exc is not None:
        ctx.note(f"export on CUDA: {type(exc).__name__}: {str(exc)[:160]}")
        return
    for label, prog in (("as exported", ep), ("after run_decompositions()", None)):
        if prog is None:
            prog, exc = attempt(ep.run_decompositions)
            if exc is not None:
                ctx.note(f"CUDA export {label}: {type(exc).__name__}: {str(exc)[:160]}")
                continue
        _, exc = attempt(prog.module(), q, k, v)
        what = "runs on CPU tensors" if exc is None else f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
        ctx.note(f"CUDA export {label}: ops {_sdpa_ops(prog)}; {what}")


def fix_2(ctx):
    from verification.cases._common import ref_attention

    t = ctx.torch
    q, k, v = _inputs(ctx)
    _note_cuda_export(ctx, q, k, v)
    ep = t.export.export(_attention_module(), (q, k, v))
    ctx.note(f"CPU export: ops {_sdpa_ops(ep)}")
    out = ctx.call(ep.module(), q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **FP32)


def fix_3(ctx):
    from verification.cases._common import ref_attention

    q, k, v = (x.to("cuda") for x in _inputs(ctx))
    out = ctx.call(_efficient, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **FP32)


def control(ctx):
    """The CPU's own fused op takes the same CPU tensors."""
    from verification.cases._common import ref_attention

    t = ctx.torch
    q, k, v = _inputs(ctx)
    out = ctx.call(lambda: t.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v)[0])
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **FP32)
