"""vLLM's FLASH_ATTN version choice: FA4's Blackwell head_dim-256 kernel refuses some settings; vLLM uses FA2."""

from verification.cases.vllm._vllm import FA_UTILS, fa_version, returned

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq"]}
# The stand-in platform reports the capability a step is about; each step runs only on that GPU,
# so a result never says a machine showed what it only simulated.
STEP_REQUIRES = {"reproduce": {"cuda": True, "arch": "sm100-sm110"}, "fix_1": {"cuda": True, "arch": "sm100-sm110"}}


def reproduce(ctx):
    # B200 (10.0), head_size 256 on a backend that supports the hd256 kernel, --block-size 16.
    text, got = ctx.expect_logged(FA_UTILS, fa_version(10, 0, head_size=256, supports_fa4_hd256=True,
                                                         kv_cache_block_size=16))
    returned(ctx, got, 2)


def fix_1(ctx):
    # --block-size left to FLASH_ATTN (128): the hd256 kernel is used, FA4 stays.
    got = ctx.not_logged(FA_UTILS, fa_version(10, 0, head_size=256, supports_fa4_hd256=True,
                                               kv_cache_block_size=128))
    returned(ctx, got, 4)
