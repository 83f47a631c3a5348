"""vLLM's FLASH_ATTN version choice logs 'Cannot use FA version N is not supported due to ...' when the GPU or build lacks it."""

import logging

from errkb.verify.case import Refuted
from verification.cases.vllm._vllm import FA_UTILS, fa_version, returned

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq"], "cuda": True, "arch": "sm90"}
# The stand-in platform reports the capability a step is about; each step runs only on that GPU,
# so a result never says a machine showed what it only simulated.
STEP_REQUIRES = {"fix_2": {"cuda": True, "arch": "sm80-sm89"}}


def reproduce(ctx):
    # The "unavailable due to" form: H200 (9.0), --attention-config.flash_attn_version 4, a
    # build with FA2/FA3 but without the FA4 CuTe sources (this tree has none: the reason is its own).
    text, got = ctx.expect_logged(FA_UTILS, fa_version(9, 0, built=(2, 3), flash_attn_version=4, head_size=128),
                              level=logging.ERROR)
    if "unavailable due to" not in text:
        raise Refuted(f"expected the 'unavailable due to' reason, got: {text}")
    returned(ctx, got, None)


def fix_2(ctx):
    # The pin removed: vLLM picks FA2 on SM80 itself.
    got = ctx.not_logged(FA_UTILS, fa_version(8, 0, head_size=128))
    returned(ctx, got, 2)
