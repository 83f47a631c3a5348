"""errkb shim for SGLang's JIT utils: only what the vendored FA4 imports.

The vendored FA4 asks whether PDL launches are allowed: compute capability 9.0 or newer, as
SGLang decides on CUDA.
"""
import torch


def is_arch_support_pdl() -> bool:
    return torch.cuda.get_device_capability()[0] >= 9
