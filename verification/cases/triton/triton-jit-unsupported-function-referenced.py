"""Triton 3.5+ refuses a @triton.jit kernel whose body calls a plain Python function while it
computes the kernel's cache key: "RuntimeError: Unsupported function referenced: <function
next_power_of_2 at 0x...>".

The kernel (verification/cases/triton/_launch_kernels.py) is the softmax of a row of N attention
scores, N = 100 keys, padded to a power of two with a project's own plain `next_power_of_2` helper
called inside the kernel. On a GPU each step launches it for real (its first launch computes the
cache key, then compiles); without one, the same kernel is compiled for an sm90 target in a child
(`triton.compile` also hashes the kernel first). Fix 1 passes the padded width from the host as a
constexpr; fix 2 wraps the same helper in @triton.constexpr_function (_launch_kernels_constexpr.py);
the control calls Triton's own `triton.next_power_of_2` in the kernel, which the record says is a
constexpr function in 3.5.1 and 3.6.0. On a GPU the fixes and the control must match torch's fp32
softmax; without one they must compile. Fix 3 (another Triton release) is not run."""

from importlib import metadata

from verification.cases.triton._launch import KERNELS_CONSTEXPR, compiled_here, kernels, launch_or_compile, on_gpu

BACKEND = "triton"
REQUIRES = {"packages": ["torch", "triton"]}
TIMEOUT = 300

ROWS, N = 64, 100  # 64 query rows, 100 keys (not a power of two)
SIG = {"S": "*fp32", "Out": "*fp32"}
FP32 = {"atol": 1e-5, "rtol": 1e-4}  # an fp32 kernel against torch's fp32 softmax


def _needs_3_5(ctx):
    v = metadata.version("triton")
    if tuple(int(x) for x in v.split(".")[:2]) < (3, 5):
        ctx.skip(f"the check is in Triton 3.5+ (jit.py's DependenciesFinder); this is Triton {v}")


def _scores(ctx):
    t = ctx.torch
    q = t.randn(ROWS, 64, device=ctx.device)
    k = t.randn(N, 64, device=ctx.device)
    return (q @ k.T) * 64 ** -0.5


def _matches(ctx, out, scores):
    ctx.close(out, ctx.torch.softmax(scores.float(), dim=-1), **FP32)


def reproduce(ctx):
    _needs_3_5(ctx)
    on_gpu(ctx)
    mod = kernels()
    scores = _scores(ctx)
    exc = ctx.expect_error(launch_or_compile, ctx, lambda: mod.softmax(mod.softmax_rows, scores), "softmax_rows",
                           SIG, {"N": N})
    ctx.note(f"the referenced object's module: {mod.next_power_of_2.__module__}; message: {exc}")


def fix_1(ctx):
    _needs_3_5(ctx)
    pad = 1 << (N - 1).bit_length()  # computed on the host (triton.next_power_of_2(N) there)
    if not on_gpu(ctx):
        return compiled_here(ctx, "softmax_rows_padded", SIG, {"N": N, "N_PAD": pad}, "softmax_rows_padded, N_PAD=128")
    mod = kernels()
    scores = _scores(ctx)
    _matches(ctx, ctx.call(mod.softmax, mod.softmax_rows_padded, scores, N_PAD=pad), scores)


def fix_2(ctx):
    _needs_3_5(ctx)
    if not on_gpu(ctx):
        return compiled_here(ctx, "softmax_rows", SIG, {"N": N}, "softmax_rows with the helper as a constexpr_function",
                             path=KERNELS_CONSTEXPR)
    fixed, mod = kernels(KERNELS_CONSTEXPR), kernels()
    ctx.note(f"helper is now {type(fixed.next_power_of_2).__name__}")
    scores = _scores(ctx)
    _matches(ctx, ctx.call(mod.softmax, fixed.softmax_rows, scores), scores)


def fix_3(ctx):
    ctx.skip("another Triton release (3.4 or older) for a library that cannot be changed: not installed here")


def control(ctx):
    import triton

    _needs_3_5(ctx)
    ctx.note(f"type(triton.next_power_of_2) is {type(triton.next_power_of_2).__name__}")
    if not on_gpu(ctx):
        return compiled_here(ctx, "softmax_rows_triton_helper", SIG, {"N": N}, "softmax_rows with triton.next_power_of_2")
    mod = kernels()
    scores = _scores(ctx)
    _matches(ctx, ctx.call(mod.softmax, mod.softmax_rows_triton_helper, scores), scores)
