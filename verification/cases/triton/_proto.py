"""A small attention forward written the way the FlashAttention Triton prototype
(flash_attn/flash_attn_triton.py, "Tested with triton==2.0.0.dev20221202") writes its score
product, `qk += tl.dot(q, k, trans_b=True)`, and the same kernel edited for Triton 2.x with an
explicit `tl.trans(k)`. Not a case (the runner skips files starting with '_').

One program per (batch, head): the whole L x D tile of q, k and v, softmax in float32, the
product with v. The functions are plain Python here, wrapped by `triton.jit` at step time: on a
GPU Triton compiles and launches them; on the CPU they run in Triton's interpreter, which
`triton.jit` gives only when TRITON_INTERPRET=1 was set before triton was imported (steps that
need it skip without it, and `compile_for_sm90` skips with it: Triton's compiler cannot run in a
process whose `tl` helpers were built for the interpreter)."""

from __future__ import annotations

import triton.language as tl

from errkb.verify.case import Skip

B, H, L, D = 2, 2, 32, 32


def attn_trans_b(Q, K, V, O, scale, L: tl.constexpr, D: tl.constexpr):
    bh = tl.program_id(0)
    rows = tl.arange(0, L)
    cols = tl.arange(0, D)
    idx = bh * L * D + rows[:, None] * D + cols[None, :]
    q = tl.load(Q + idx)
    k = tl.load(K + idx)
    v = tl.load(V + idx)
    qk = tl.zeros([L, L], dtype=tl.float32)
    qk += tl.dot(q, k, trans_b=True)
    p = tl.exp(qk * scale - tl.max(qk * scale, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    o = tl.dot(p.to(v.dtype), v)
    tl.store(O + idx, o.to(O.dtype.element_ty))


def attn_trans(Q, K, V, O, scale, L: tl.constexpr, D: tl.constexpr):
    bh = tl.program_id(0)
    rows = tl.arange(0, L)
    cols = tl.arange(0, D)
    idx = bh * L * D + rows[:, None] * D + cols[None, :]
    q = tl.load(Q + idx)
    k = tl.load(K + idx)
    v = tl.load(V + idx)
    qk = tl.zeros([L, L], dtype=tl.float32)
    qk += tl.dot(q, tl.trans(k))
    p = tl.exp(qk * scale - tl.max(qk * scale, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    o = tl.dot(p.to(v.dtype), v)
    tl.store(O + idx, o.to(O.dtype.element_ty))


_built: dict = {}


def kernel(ctx, fn):
    """fn compiled by Triton for the GPU, or run by Triton's interpreter on the CPU (noted)."""
    import triton

    key = (fn, ctx.device)
    if key not in _built:
        if ctx.device == "cuda":
            _built[key] = triton.jit(fn)
        else:
            if not interpreting():
                ctx.skip("on the CPU this step runs the kernel in Triton's interpreter, which needs "
                         "TRITON_INTERPRET=1 set before triton is imported (tl's own jit helpers, tl.max "
                         "and tl.sum, are built for it then); run it with TRITON_INTERPRET=1")
            _built[key] = triton.jit(fn)  # an InterpretedFunction under TRITON_INTERPRET=1
    ctx.note(f"{fn.__name__}: " + ("compiled by Triton for the GPU" if ctx.device == "cuda"
                                   else "run by Triton's interpreter on the CPU (TRITON_INTERPRET's path)"))
    return _built[key]


def interpreting() -> bool:
    from triton import knobs

    return bool(knobs.runtime.interpret)


def use_gpu_if_any(ctx):
    """The GPU where there is one (the compiler's path users take), else the CPU interpreter."""
    if ctx.torch.cuda.is_available():
        ctx.device = "cuda"


def qkv(ctx):
    """fp16 on the GPU (as the prototype takes), float32 for the interpreter."""
    t = ctx.torch
    dtype = t.float16 if ctx.device == "cuda" else t.float32
    return tuple(t.randn(B, H, L, D, device=ctx.device, dtype=dtype) for _ in range(3))


def attention(ctx, fn, q, k, v):
    o = ctx.torch.empty_like(q)
    kernel(ctx, fn)[(B * H,)](q, k, v, o, D ** -0.5, L=L, D=D)
    return o


def tol(ctx):
    """fp16 products against the fp32 reference on the GPU; float32 in the interpreter."""
    return {"atol": 2e-2, "rtol": 2e-2} if ctx.device == "cuda" else {"atol": 1e-4, "rtol": 1e-4}


def compile_for_sm90(fn):
    """Triton's compiler on fn for an sm90 target, without a GPU: the front end that turns the
    kernel's Python into Triton IR (where a bad tl.dot call fails) and the NVIDIA back end down to
    a cubin. What a launch on an H100/H200 runs before it starts the kernel; nothing is launched."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    if interpreting():
        raise Skip("Triton's compiler cannot run under TRITON_INTERPRET=1 (triton.jit and tl's helpers "
                   "are interpreter functions then); run this step without it")
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16", "scale": "fp32", "L": "constexpr", "D": "constexpr"}
    src = ASTSource(fn=triton.jit(fn), signature=sig, constexprs={"L": L, "D": D})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32))
