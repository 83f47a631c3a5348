"""vLLM's FLASH_ATTN version choice: on Blackwell, FA4 with a head size it cannot hold in TMEM falls back to FA2."""

from verification.cases.vllm._vllm import FA_UTILS, fa_version, returned

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq"]}
# The stand-in platform reports the capability a step is about; each step runs only on that GPU,
# so a result never says a machine showed what it only simulated.
STEP_REQUIRES = {"reproduce": {"cuda": True, "arch": "sm100-sm110"}, "control": {"cuda": True, "arch": "sm100-sm110"}}


def reproduce(ctx):
    # B200 (10.0), head_size 160: FA2 with the warning.
    _, got = ctx.expect_logged(FA_UTILS, fa_version(10, 0, head_size=160))
    returned(ctx, got, 2)


def control(ctx):
    # head_size 128 on the same GPU keeps FA4.
    got = ctx.not_logged(FA_UTILS, fa_version(10, 0, head_size=128))
    returned(ctx, got, 4)
