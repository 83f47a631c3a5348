"""flash-attn's MHA layer with rotary embeddings given packed (cu_seqlens) input: the bare
`assert self.rotary_emb_dim == 0`.

flash-attn v2.8.3's Python files (git tag) next to PyPI's torch 2.5.1 and Triton 3.1.0 (which
flash_attn.layers.rotary imports), the compiled flash_attn_2_cuda stood in
(verification/cases/_fa_torch25.py). Reproduce: MHA(64, 4, rotary_emb_dim=16, use_flash_attn=True) is
built and its forward called with packed tokens, cu_seqlens and max_seqlen; the precondition asserts
at the top of MHA.forward run before any kernel, and the record's bare AssertionError comes first (its
statement read from the traceback's source line; the notes give the mha.py line). The fixes call the varlen and padded FlashAttention kernels, which
need a GPU and a flash-attn build: not run here."""

import re

from verification.cases import _fa_torch25 as fa
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800

CALL = """
import torch
from flash_attn.modules.mha import MHA
mha = MHA(64, 4, rotary_emb_dim=16, use_flash_attn=True, causal=True)
print('BUILT', type(mha.rotary_emb).__name__, flush=True)
x = torch.randn(12, 64)
cu = torch.tensor([0, 5, 12], dtype=torch.int32)
mha(x, cu_seqlens=cu, max_seqlen=7)
"""


def reproduce(ctx):
    res = fa.run(ctx, "v2.8.3", CALL)
    if "BUILT" not in res.output:
        raise RuntimeError(f"MHA was not built: {res.tail(600)}")
    frames = re.findall(r'File "[^"]*/(flash_attn/[^"]+)", line (\d+)', res.output)
    if frames:
        ctx.note("last flash_attn frame: " + ":".join(frames[-1]))
    ctx.expect_error(_statement, res)


def _statement(res: _venv.Run) -> None:
    """The child's bare AssertionError again, carrying the statement its traceback shows (a bare assert
    has no message; Python prints the source line above `AssertionError`); other failures as printed."""
    lines = res.output.splitlines()
    for i in range(len(lines) - 1, 0, -1):
        if lines[i].strip() == "AssertionError":
            source = [ln.strip() for ln in lines[max(0, i - 3):i] if ln.strip() and set(ln.strip()) != {"^"}]
            if source and source[-1].startswith("assert "):
                raise AssertionError(source[-1])
    _venv.reraise(res.output)


def fix_1(ctx):
    ctx.skip("calls flash_attn_varlen_qkvpacked_func: needs a GPU and a flash-attn build")


def fix_2(ctx):
    ctx.skip("calls MHA's FlashAttention kernel on padded batches: needs a GPU and a flash-attn build")
