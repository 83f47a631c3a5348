"""attention-gym's examples/benchmark.py compares compiled FlexAttention with SDPA on a dense mask
(torch.testing.assert_close, atol 1e-1, rtol 1e-2, output and q/k/v gradients); the record's failure was
seen on a V100.

The benchmark's own test_mask is used: the function, with the helpers it calls (create_block_mask_cached,
calculate_tflops, print_header) and its module settings (flex_attention compiled with dynamic=False, float16),
taken from examples/benchmark.py of attention-gym 7fdb85d (a local clone, or the copy carried in .gpu/v11 by
the .gpu/v11 builder (docs/verification.md)) and executed without the rest of the script (its top level needs the
attn_gym package and sets CUDA as default device). causal_mask is attn_gym's (attn_gym/masks/causal.py: q_idx >=
kv_idx). Where tabulate is not installed, the timing table is printed by a stand-in (noted). The sizes are cut
to B=1, H=2, S=1024, D=64 (the example's are 16, 16, 8192, 64).

reproduce: only on a V100 (sm70), the GPU of the report: the causal example's check raises the message.
fix 1: the record's float64 comparison, on the GPU where there is one, else on the CPU: FlexAttention's and
SDPA's fp16 outputs each stay within 1e-2 of float64 attention here (neither side is the broken one).
fix 2: skipped (upgrading torch/Triton or reporting the bug is nothing to run).
fix 3 (GPU): test_mask(..., skip_correctness=True) runs the timings and no correctness check.
control (GPU): test_mask(causal_mask) with the check runs through ("Correctness check passed")."""

import ast
import contextlib
import io
import os

from verification.cases import _carried, _downstream
from verification.cases.pytorch._sdpa import gpu_if_any

BACKEND = "flex-attention"
REQUIRES = {"packages": ["torch"]}
STEP_REQUIRES = {"reproduce": {"cuda": True, "arch": "sm70", "packages": ["triton"]},
                 "fix_3": {"cuda": True, "packages": ["triton"]},
                 "control": {"cuda": True, "packages": ["triton"]}}
TIMEOUT = 600
GYM = ("meta-pytorch/attention-gym", "7fdb85d")
SIZES = {"B": 1, "H": 2, "S": 1024, "D": 64}
KEEP_FUNCTIONS = {"test_mask", "create_block_mask_cached", "calculate_tflops", "print_header"}
KEEP_NAMES = {"data_type", "flex_attention"}


def causal_mask(b, h, q_idx, kv_idx):  # attn_gym/masks/causal.py at 7fdb85d
    return q_idx >= kv_idx


def _benchmark_file(ctx):
    carried = _carried.folder() / "attention-gym-7fdb85d" / "examples" / "benchmark.py"
    if carried.is_file():
        ctx.note(f"examples/benchmark.py of attention-gym {GYM[1]} (carried)")
        return carried
    return _downstream.tree(ctx, *GYM, ["examples/benchmark.py"]) / "examples" / "benchmark.py"


def _test_mask(ctx):
    import functools

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import flex_attention as fa
    from triton.testing import do_bench

    path = _benchmark_file(ctx)
    tree = ast.parse(path.read_text())
    body = [node for node in tree.body
            if (isinstance(node, ast.FunctionDef) and node.name in KEEP_FUNCTIONS)
            or (isinstance(node, ast.Assign) and any(getattr(t, "id", None) in KEEP_NAMES for t in node.targets))]
    try:
        from tabulate import tabulate
    except ImportError:
        ctx.note("tabulate not installed: the timing table is printed by a stand-in")

        def tabulate(rows, headers=(), tablefmt=None):
            return "\n".join(" | ".join(map(str, r)) for r in [headers, *rows])
    ns = {"torch": torch, "F": F, "lru_cache": functools.lru_cache, "do_bench": do_bench, "tabulate": tabulate,
          "flex_attention": fa.flex_attention, "create_block_mask": fa.create_block_mask, "create_mask": fa.create_mask,
          "_DEFAULT_SPARSE_BLOCK_SIZE": fa._DEFAULT_SPARSE_BLOCK_SIZE, "_mask_mod_signature": fa._mask_mod_signature,
          "_score_mod_signature": fa._score_mod_signature}
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), ns)
    ctx.note(f"kept from {path.name}: {sorted(n.name if isinstance(n, ast.FunctionDef) else n.targets[0].id for n in body)}")
    return ns["test_mask"]


def _run_test_mask(ctx, **kw):
    test_mask = _test_mask(ctx)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        ctx.call(test_mask, mask_mod=causal_mask, print_mask=False, **SIZES, **kw)
    text = printed.getvalue()
    ctx.note("printed: " + " / ".join(line for line in text.splitlines() if line.strip() and "═" not in line)[:600])
    return text


def reproduce(ctx):
    test_mask = _test_mask(ctx)
    ctx.expect_error(test_mask, mask_mod=causal_mask, print_mask=False, **SIZES)


def fix_1(ctx):
    gpu_if_any(ctx)
    torch = ctx.torch
    F = torch.nn.functional
    from torch.nn.attention.flex_attention import create_block_mask, create_mask, flex_attention

    device = ctx.device
    torch._dynamo.reset()
    ctx.seed(0)
    # the record's fix, with device='cuda' replaced by this step's device
    q, k, v = (torch.randn(1, 2, 1024, 64, device=device, dtype=torch.float16) for _ in range(3))
    mask = create_mask(causal_mask, 1, 1, 1024, 1024, device=device)
    block_mask = create_block_mask(causal_mask, 1, 1, 1024, 1024, device=device)
    ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask)
    flex = ctx.call(torch.compile(flex_attention), q, k, v, block_mask=block_mask)
    sdpa = ctx.call(F.scaled_dot_product_attention, q, k, v, attn_mask=mask)
    ctx.note(f"max |flex - float64| {(flex.double() - ref).abs().max().item():.2e}, "
             f"max |sdpa - float64| {(sdpa.double() - ref).abs().max().item():.2e}")
    ctx.close(flex, ref, atol=1e-2, what="flex_attention")
    ctx.close(sdpa, ref, atol=1e-2, what="SDPA")


def fix_2(ctx):
    ctx.skip("trying another torch/Triton or GPU, and reporting the bug, is nothing a step can run")


def fix_3(ctx):
    text = _run_test_mask(ctx, skip_correctness=True)
    if "Correctness check passed" in text:
        raise AssertionError("the correctness check ran although skip_correctness=True")


def control(ctx):
    text = _run_test_mask(ctx)
    if "Correctness check passed" not in text:
        raise AssertionError("test_mask returned without its 'Correctness check passed' line")
