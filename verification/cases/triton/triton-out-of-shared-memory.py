"""A Triton kernel whose tiles need more shared memory per block than the GPU allows fails at
its first launch with OutOfResources.

The kernel is a plain tiled matmul (C = A @ B, float32 accumulator), launched for real on
256 x 256 x 256 inputs. Its shared memory, as Triton 3.6 (torch 2.11's) reports it in the
compiled kernel's metadata for sm90 with 8 warps (compiled for that target on a CPU machine,
2026-12-06):

| inputs | BLOCK_M x BLOCK_N x BLOCK_K | num_stages | shared bytes |
| --- | --- | --- | --- |
| float32 | 128 x 128 x 128 | 3 | 393,216 (3 x 128 KiB of A and B tiles) |
| float32 | 128 x 128 x 128 | 1 | 131,072 |
| float32 | 64 x 64 x 32 | 2 | 32,768 |
| float16 | 128 x 128 x 128 | 3 | 65,536 |

against sm90's 232,448 bytes per block. The sizes are worked out for sm90, hence the arch."""

import triton
import triton.language as tl

from errkb.verify.case import Refuted

BACKEND = "triton"
REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["torch", "triton"]}
TIMEOUT = 300
SIZE = 256
BIG = {"BM": 128, "BN": 128, "BK": 128, "num_stages": 3, "num_warps": 8}
SM90_LIMIT = 232448
TOL = {"atol": 2e-2, "rtol": 2e-2}  # tf32 (float32 inputs) or fp16 products, float32 accumulation


@triton.jit
def matmul_kernel(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(B + (k0 + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(C + rm[:, None] * N + rn[None, :], acc)


def _inputs(ctx, dtype):
    t = ctx.torch
    a = t.randn(SIZE, SIZE, device=ctx.device).to(dtype)
    b = (t.randn(SIZE, SIZE, device=ctx.device) / SIZE ** 0.5).to(dtype)
    return a, b


def _matmul(ctx, a, b, BM, BN, BK, num_stages, num_warps):
    c = ctx.torch.empty(SIZE, SIZE, device=ctx.device, dtype=ctx.torch.float32)
    grid = (SIZE // BM, SIZE // BN)
    kernel = matmul_kernel[grid](a, b, c, SIZE, SIZE, SIZE, BM=BM, BN=BN, BK=BK,
                                 num_stages=num_stages, num_warps=num_warps)
    ctx.note(f"BLOCK {BM}x{BN}x{BK}, num_stages={num_stages}, {a.dtype}: "
             f"{kernel.metadata.shared} bytes of shared memory")
    return c


def _matches(ctx, dtype, **config):
    a, b = _inputs(ctx, dtype)
    out = ctx.call(_matmul, ctx, a, b, **config)
    ctx.close(out, a.float() @ b.float(), **TOL)


def reproduce(ctx):
    """The launch fails, and the limit it names is the record's figure for sm90."""
    a, b = _inputs(ctx, ctx.torch.float32)
    exc = ctx.expect_error(_matmul, ctx, a, b, **BIG)
    if exc.limit != SM90_LIMIT:
        raise Refuted(f"the error names a limit of {exc.limit} bytes, not the record's {SM90_LIMIT} for sm90")


def fix_1(ctx):
    """Fewer stages with the same tiles, and smaller tiles: both fit and give the right product."""
    _matches(ctx, ctx.torch.float32, **{**BIG, "num_stages": 1})
    _matches(ctx, ctx.torch.float32, BM=64, BN=64, BK=32, num_stages=2, num_warps=8)


def fix_2(ctx):
    """The same tiles and stages with float16 inputs."""
    _matches(ctx, ctx.torch.float16, **BIG)
