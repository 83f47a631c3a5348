"""_launch_kernels.softmax_rows with the project's helper wrapped in @triton.constexpr_function, as
the record triton-jit-unsupported-function-referenced's second fix writes it (same name, same body)."""

import triton
import triton.language as tl


@triton.constexpr_function
def next_power_of_2(n):
    return 1 << (n - 1).bit_length()


@triton.jit
def softmax_rows(S, Out, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, next_power_of_2(N))
    s = tl.load(S + row * N + offs, mask=offs < N, other=float("-inf"))
    p = tl.exp(s - tl.max(s, axis=0))
    tl.store(Out + row * N + offs, p / tl.sum(p, axis=0), mask=offs < N)
