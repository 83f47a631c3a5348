"""A hand-written Triton kernel launched with a torch.float8_e8m0fnu tensor: Triton's launcher looks
the dtype's name up in its type table while binding the arguments, has no entry for it, and the
launch stops with "KeyError: 'float8_e8m0fnu'" (the record quotes the line as Python prints it;
the step compares that line).

The kernel (_launch_kernels.scale_blocks) dequantizes an MXFP8-style key cache: float8_e4m3fn
values in blocks of 32, one power-of-two scale per block. Reproduce passes the scales as
float8_e8m0fnu; fix 1 passes `scales.view(torch.uint8)` to a kernel that decodes the byte as
2 ** (byte - 127), as the record's fix writes it; the control passes the same scales as float32.
The fix and the control must equal the fp32 reference k.float() * 2 ** (e - 127), computed from
the exponent bytes themselves (not from torch's e8m0 conversion), within fp32 rounding. The lookup
happens when the launcher binds a tensor argument, so every step needs a GPU. Fix 2 (a fork's own
update) is not run."""

from verification.cases.triton._launch import kernels, printed

BACKEND = "triton"
REQUIRES = {"cuda": True, "packages": ["torch", "triton"]}
TIMEOUT = 300

BLOCK, BLOCKS = 32, 64
EXACT = {"atol": 1e-6, "rtol": 1e-6}  # powers of two times e4m3 values: exact in fp32 but for exp2's rounding


def _cache(ctx):
    """(fp8 keys, exponent bytes as int32, the e8m0 scales with those bytes)."""
    t = ctx.torch
    k = (t.randn(BLOCKS * BLOCK, device="cuda") * 4).to(t.float8_e4m3fn)
    e = t.randint(120, 135, (BLOCKS,), device="cuda", dtype=t.int32)  # scales 2**-7 ... 2**7
    scales = e.to(t.uint8).view(t.float8_e8m0fnu)
    return k, e, scales


def _reference(ctx, k, e):
    t = ctx.torch
    return (k.float().view(BLOCKS, BLOCK) * t.pow(2.0, (e - 127).double()).float()[:, None]).view(-1)


def reproduce(ctx):
    mod = kernels()
    k, _, scales = _cache(ctx)
    ctx.note(f"scales: {scales.dtype}, keys: {k.dtype}")
    ctx.expect_error(printed, mod.dequantize, mod.scale_blocks, k, scales, BLOCK)


def fix_1(ctx):
    t = ctx.torch
    mod = kernels()
    k, e, scales = _cache(ctx)
    bits = scales.view(t.uint8)
    if not t.equal(bits.int(), e):
        raise RuntimeError("the e8m0 tensor's bytes are not the exponents it was made from")
    out = ctx.call(printed, mod.dequantize, mod.scale_blocks_e8m0_bytes, k, bits, BLOCK)
    ctx.close(out, _reference(ctx, k, e), **EXACT)


def fix_2(ctx):
    ctx.skip("updating a fork or plugin that converts the scales itself: project-specific, not checked")


def control(ctx):
    t = ctx.torch
    mod = kernels()
    k, e, _ = _cache(ctx)
    out = ctx.call(printed, mod.dequantize, mod.scale_blocks, k, t.pow(2.0, (e - 127).float()), BLOCK)
    ctx.close(out, _reference(ctx, k, e), **EXACT)
