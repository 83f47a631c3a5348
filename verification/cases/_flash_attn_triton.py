"""Where flash-attn's Triton prototype (flash_attn/flash_attn_triton.py) is on this path: the two
cases about it, one compiling its kernel and one calling it, read the same file."""

from __future__ import annotations

import importlib.util
from pathlib import Path

# _fwd_kernel's arguments (flash-attn v2.0.9 and later) and the constants its sm80 compile takes
_PTRS = {n: "*fp16" for n in ("Q", "K", "V", "Bias", "Out")}
FWD_SIG = {**_PTRS, "Lse": "*fp32", "TMP": "*fp32", "softmax_scale": "fp32",
           **{n: "i32" for n in ("stride_qb", "stride_qh", "stride_qm", "stride_kb", "stride_kh", "stride_kn",
                                 "stride_vb", "stride_vh", "stride_vn", "stride_bb", "stride_bh", "stride_bm",
                                 "stride_ob", "stride_oh", "stride_om", "nheads", "seqlen_q", "seqlen_k",
                                 "seqlen_q_rounded", "headdim", "CACHE_KEY_SEQLEN_Q", "CACHE_KEY_SEQLEN_K")}}
FWD_CONST = {"BIAS_TYPE": "none", "IS_CAUSAL": False, "BLOCK_HEADDIM": 64, "EVEN_M": True, "EVEN_N": True,
             "EVEN_HEADDIM": True, "BLOCK_M": 128, "BLOCK_N": 128}


def prototype_path(ctx) -> Path:
    """The prototype's file in the flash-attn tree on the path; the step is skipped without one."""
    spec = importlib.util.find_spec("flash_attn")
    if spec is None or not spec.submodule_search_locations:
        ctx.skip("needs the flash-attn Python tree on the path (flash_attn/flash_attn_triton.py)")
    path = Path(list(spec.submodule_search_locations)[0]) / "flash_attn_triton.py"
    if not path.is_file():
        ctx.skip(f"{path} is not in this flash-attn tree")
    return path
