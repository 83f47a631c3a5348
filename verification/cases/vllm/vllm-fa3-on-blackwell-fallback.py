"""vLLM's FLASH_ATTN version choice: flash_attn_version=3 on Blackwell is replaced by FA4 (or FA2) with a warning."""

from verification.cases.vllm._vllm import FA_UTILS, fa_version, returned

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq"]}
# The stand-in platform reports the capability a step is about; each step runs only on that GPU,
# so a result never says a machine showed what it only simulated.
STEP_REQUIRES = {"reproduce": {"cuda": True, "arch": "sm100-sm110"}, "fix_1": {"cuda": True, "arch": "sm100-sm110"}, "control": {"cuda": True, "arch": "sm90"}}


def reproduce(ctx):
    # B200 (10.0), FA3 pinned, a build with FA4: warning, FA4 used.
    _, got = ctx.expect_logged(FA_UTILS, fa_version(10, 0, flash_attn_version=3, head_size=128))
    returned(ctx, got, 4)


def fix_1(ctx):
    # Pin dropped: vLLM picks FA4 on SM100 itself, without the warning.
    got = ctx.not_logged(FA_UTILS, fa_version(10, 0, head_size=128))
    returned(ctx, got, 4)


def control(ctx):
    # The same pin on Hopper (9.0) is honoured.
    got = ctx.not_logged(FA_UTILS, fa_version(9, 0, flash_attn_version=3, head_size=128))
    returned(ctx, got, 3)
