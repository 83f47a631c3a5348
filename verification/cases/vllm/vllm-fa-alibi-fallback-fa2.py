"""vLLM's FLASH_ATTN version choice: an ALiBi model on Hopper (FA3 by default) falls back to FA2 with a warning."""

from verification.cases.vllm._vllm import FA_UTILS, fa_version, returned

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq"], "cuda": True, "arch": "sm90"}
# Every step asks what vLLM decides on this GPU (9.0), so it runs only there.


def reproduce(ctx):
    # H200 (9.0), a build with FA2/FA3/FA4: FA3 is the default, ALiBi sends it back to FA2.
    _, got = ctx.expect_logged(FA_UTILS, fa_version(9, 0, requires_alibi=True, head_size=128))
    returned(ctx, got, 2)


def fix_1(ctx):
    # --attention-config.flash_attn_version 2: same kernels, no warning.
    got = ctx.not_logged(FA_UTILS, fa_version(9, 0, flash_attn_version=2, requires_alibi=True, head_size=128))
    returned(ctx, got, 2)


def control(ctx):
    # The same model without ALiBi keeps FA3.
    got = ctx.not_logged(FA_UTILS, fa_version(9, 0, requires_alibi=False, head_size=128))
    returned(ctx, got, 3)
