"""A torch build without the flash kernel (Windows wheels) warns when SDPA runs on CUDA."""

from verification.cases._common import TOL, ref_attention
from verification.cases.pytorch._sdpa import in_backends, qkv, sdpa

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "packages": ["torch"]}


def reproduce(ctx):
    if ctx.torch.backends.cuda.is_flash_attention_available():
        ctx.skip("needs a torch build without flash attention (this build has it)")
    q, k, v = qkv(ctx)
    ctx.expect_warning(in_backends, ["FLASH_ATTENTION"], sdpa, q, k, v)


def fix_2(ctx):
    if not ctx.torch.backends.cuda.is_flash_attention_available():
        ctx.skip("needs a torch build with flash attention")
    q, k, v = qkv(ctx)
    out = ctx.call(in_backends, ["FLASH_ATTENTION", "EFFICIENT_ATTENTION"], sdpa, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)
