"""The header of the CompilationError that the FlashAttention Triton prototype
(flash_attn/flash_attn_triton.py) raises under Triton 2.0.0 and newer: "CompilationError: at
<line>:<col>:", the position counted from the kernel's def line, with the kernel's source up to
the failing line after it.

The real file is compiled, as for flash-attn-triton-prototype-trans-b-compile-error (the record
about the failing source line): flash_attn_triton.py of the flash-attn tree on the path (found
with importlib, without importing flash_attn, whose __init__ needs the compiled
flash_attn_2_cuda), its forward kernel `_fwd_kernel` compiled for sm80 with
`triton.compile(..., target=GPUTarget("cuda", 80, 32))` in a child process, with the arguments
FlashAttnFunc passes for fp16 q/k/v of head dim 64 and no bias. The exception is judged as Python
prints it at the bottom of a traceback ("triton.compiler.errors.CompilationError: at ..."), which
is the line the record quotes. The record also says where the header points in flash-attn's own
file from v2.0.9 on: line 118 of _fwd_kernel, the first `tl.dot(q, k, trans_b=True)`; the step
checks the line (the last source line the error shows, and its number) and notes the column, which
depends on the Triton release. Nothing runs on a GPU; the fixes are the sibling record's."""

from errkb.verify.case import Refuted
from verification.cases._flash_attn_triton import FWD_CONST, FWD_SIG, prototype_path
from verification.cases.triton._compile import compile_for, reraise
from verification.cases.triton._launch import printed

BACKEND = "triton"
REQUIRES = {"packages": ["triton"]}
TIMEOUT = 300

LINE = 118  # the record: _fwd_kernel's first tl.dot(q, k, trans_b=True) in the file of v2.0.9 and later
PRODUCT = "tl.dot(q, k, trans_b=True)"


def reproduce(ctx):
    import re

    import triton

    path = prototype_path(ctx)
    ctx.note(f"compiling _fwd_kernel of {path} for sm80 with triton {triton.__version__}")
    result = compile_for(ctx, str(path), "_fwd_kernel", FWD_SIG, FWD_CONST, 80)
    ctx.expect_error(printed, reraise, result)
    message = ctx.observed["message"]
    where = re.search(r"CompilationError: at (\d+):(\d+):", message)
    lines = message.splitlines()
    caret = next((i for i, ln in enumerate(lines) if ln.strip() and set(ln.strip()) == {"^"}), None)
    # the failing source line: the one the caret points at (Triton 2.x has no caret: its last line)
    last = lines[caret - 1] if caret else next((ln for ln in reversed(lines) if ln.strip()), "")
    ctx.note(f"header at {where.group(1)}:{where.group(2)} (the record's example reads 118:24); "
             f"last source line shown: {last.strip()!r}")
    if int(where.group(1)) != LINE or PRODUCT not in last:
        raise Refuted(f"the header points at line {where.group(1)} ({last.strip()!r}), not at line {LINE}'s {PRODUCT}")
