"""An xformers operator looked up while the compiled extension is not loaded: "No such operator
xformers::<name> - did you forget to build xformers with `python setup.py develop`?".

No GPU needed: xformers 0.0.28.post3 next to torch 2.13.0+cpu (its _C, built for torch 2.5.1,
does not load). In 0.0.28 the attention kernels run PyTorch's own operators, so the call made here
is the fused SwiGLU op that still comes from xformers' extension (xops.swiglu with
op=SwiGLUPackedFusedOp on CPU tensors): its operator stub raises the record's message. Fix 1 (the
wheel built for the torch in use: 0.0.28.post3 with 2.5.1) must make the same operator resolve in
torch.ops.xformers; running it needs a GPU. Fix 2 (build a source checkout) is not run."""

from verification.cases.xformers._xf import cpp_loaded, matched_pair

BACKEND = "xformers"
REQUIRES = {"packages": ["torch", "xformers.ops"]}
TIMEOUT = 180


def _packed_swiglu(ctx):
    import xformers.ops as xops

    t = ctx.torch
    x = t.randn(4, 32, dtype=t.float16)
    w12, b12 = t.randn(2, 64, 32, dtype=t.float16), t.zeros(2, 64, dtype=t.float16)
    w3, b3 = t.randn(32, 64, dtype=t.float16), t.zeros(32, dtype=t.float16)
    return lambda: xops.swiglu(x, w12[0], b12[0], w12[1], b12[1], w3, b3, op=xops.SwiGLUPackedFusedOp)


def reproduce(ctx):
    if cpp_loaded():
        ctx.skip("xFormers' C++ extension loaded here, so its operators exist")
    ctx.expect_error(_packed_swiglu(ctx))


def fix_1(ctx):
    pin = matched_pair(ctx)
    t = ctx.torch
    import xformers.ops  # noqa: F401 - loads the extension, which registers the operators

    op = ctx.call(lambda: t.ops.xformers.swiglu_packedw)
    ctx.note(f"torch.ops.xformers.swiglu_packedw = {op!r} with the torch {pin} this wheel pins; running it needs a GPU")


def fix_2(ctx):
    ctx.skip("building a source checkout needs the CUDA toolkit")
