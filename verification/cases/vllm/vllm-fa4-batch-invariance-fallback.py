"""vLLM's FLASH_ATTN version choice: VLLM_BATCH_INVARIANT=1 turns FA4 into FA2 with a warning."""

from verification.cases.vllm._vllm import FA_UTILS, fa_version, returned

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq"]}
# The stand-in platform reports the capability a step is about; each step runs only on that GPU,
# so a result never says a machine showed what it only simulated.
STEP_REQUIRES = {"reproduce": {"cuda": True, "arch": "sm100-sm110"}, "fix_1": {"cuda": True, "arch": "sm100-sm110"}, "control": {"cuda": True, "arch": "sm90"}}


def reproduce(ctx):
    # B200 (10.0): FA4 by default; batch invariance sends it to FA2.
    _, got = ctx.expect_logged(FA_UTILS, fa_version(10, 0, env={"VLLM_BATCH_INVARIANT": "1"}, head_size=128))
    returned(ctx, got, 2)


def fix_1(ctx):
    # Variable unset (0): FA4, no warning.
    got = ctx.not_logged(FA_UTILS, fa_version(10, 0, env={"VLLM_BATCH_INVARIANT": "0"}, head_size=128))
    returned(ctx, got, 4)


def control(ctx):
    # Batch invariance on Hopper: FA3 is kept, no FA4 warning.
    got = ctx.not_logged(FA_UTILS, fa_version(9, 0, env={"VLLM_BATCH_INVARIANT": "1"}, head_size=128))
    returned(ctx, got, 3)
