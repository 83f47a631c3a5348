"""The FlashAttention Triton prototype (flash_attn/flash_attn_triton.py) writes tl.dot(q, k,
trans_b=True); Triton 2.0.0 and newer fail to compile it, and the CompilationError quotes the
kernel's source down to that line.

The real file is compiled: flash_attn_triton.py of the flash-attn tree on the path (git tag
v2.8.3's Python files; found with importlib, without importing flash_attn, whose __init__ needs
the compiled flash_attn_2_cuda). Its forward kernel `_fwd_kernel` is compiled for sm80 with
`triton.compile(..., target=GPUTarget("cuda", 80, 32))` in a child process (_compile.py), as its
first launch would on an A100, with the arguments FlashAttnFunc passes for fp16 q/k/v of head
dim 64 and no bias. Fix 2 is made as the record writes it, on a copy of that file in a temporary
folder (every `tl.dot(q, k, trans_b=True)` becomes `tl.dot(q, tl.trans(k))`), and the edited
forward kernel must compile down to a cubin; nothing runs. Fixes 1 and 3 are not run here."""

import tempfile
from pathlib import Path

from verification.cases._flash_attn_triton import FWD_CONST, FWD_SIG, prototype_path
from verification.cases.triton._compile import compile_for, compiled, reraise

BACKEND = "triton"
REQUIRES = {"packages": ["triton"]}
TIMEOUT = 300


def prototype_file(ctx) -> str:
    path = prototype_path(ctx)
    ctx.note(f"compiling _fwd_kernel of {path}")
    return str(path)


def reproduce(ctx):
    ctx.expect_error(lambda: reraise(compile_for(ctx, prototype_file(ctx), "_fwd_kernel", FWD_SIG, FWD_CONST, 80)))


def fix_1(ctx):
    ctx.skip("MPT's attn_config['attn_impl'] = 'torch' lives in the model's remote code (a Hub download)")


def fix_2(ctx):
    source = Path(prototype_file(ctx)).read_text()
    old, new = "tl.dot(q, k, trans_b=True)", "tl.dot(q, tl.trans(k))"
    if old not in source:
        ctx.skip(f"this flash_attn_triton.py has no {old!r}")
    edited = Path(tempfile.mkdtemp(prefix="errkb-fa-triton-")) / "flash_attn_triton_edited.py"
    edited.write_text(source.replace(old, new))
    ctx.note(f"replaced {source.count(old)} x {old!r} with {new!r}")
    compiled(ctx, compile_for(ctx, str(edited), "_fwd_kernel", FWD_SIG, FWD_CONST, 80), "edited _fwd_kernel for sm80")


def fix_3(ctx):
    ctx.skip("the pre-MLIR Triton is a git branch build (triton-pre-mlir), not a release this machine can install")
