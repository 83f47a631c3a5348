"""Runs ON the lent GPU (from fa2-build.sh, with the built site first on sys.path): a reduced FA2
build is packed only if it imports, its compiled kernels agree with PyTorch's attention, and a
missing kernel raises the "errkb reduced FA2 build" message the flash-attn cases skip on."""

from __future__ import annotations

import sys


def main() -> int:
    import torch
    import torch.nn.functional as F

    import flash_attn

    torch.manual_seed(0)
    for dtype in (torch.bfloat16, torch.float16):
        for causal in (False, True):
            q, k, v = (torch.randn(2, 96, 4, 128, device="cuda", dtype=dtype) for _ in range(3))
            ref = F.scaled_dot_product_attention(*(t.transpose(1, 2).float() for t in (q, k, v)),
                                                 is_causal=causal).transpose(1, 2)
            out = flash_attn.flash_attn_func(q, k, v, causal=causal)
            cache = flash_attn.flash_attn_with_kvcache(q, k, v, causal=causal, num_splits=2)  # split-KV kernel
            for name, got in (("forward", out), ("split-KV forward", cache)):
                err = (got.float() - ref).abs().max().item()
                print(f"{name} {dtype} causal={causal}: max abs error {err:.2e}")
                if err > 2e-2:
                    print("fa2_smoke.py: the compiled kernel disagrees with PyTorch's attention", file=sys.stderr)
                    return 1
    q = torch.randn(1, 16, 2, 64, device="cuda", dtype=torch.bfloat16)
    try:
        flash_attn.flash_attn_func(q, q, q)
    except RuntimeError as exc:
        print(f"head dim 64: {exc}")
        return 0 if "errkb reduced FA2 build" in str(exc) else 1
    print("fa2_smoke.py: head dim 64 ran, but this build should not have that kernel", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
