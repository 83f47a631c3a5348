"""VLLM_ATTENTION_BACKEND / VLLM_FLASH_ATTN_VERSION are not vLLM 0.33 environment variables: engine start-up warns about them."""

import os
from unittest import mock

from errkb.verify.case import Refuted
from verification.cases.vllm._vllm import pin_platform
from verification.cases.vllm._engine import first

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq"]}
LOGGER = "vllm.platforms.interface"


def _validate(env):
    """Platform.validate_environ(hard_fail=False), as EngineArgs calls it (the default of
    fail_on_environ_validation), with the process's VLLM_* variables replaced by `env`."""
    pin_platform()
    from vllm.platforms.interface import Platform

    clean = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_")}
    with mock.patch.dict(os.environ, {**clean, **env}, clear=True):
        Platform.validate_environ(hard_fail=False)


def reproduce(ctx):
    text, _ = ctx.expect_logged(LOGGER, _validate, {"VLLM_ATTENTION_BACKEND": "FLASHINFER"})
    if "VLLM_ATTENTION_BACKEND" not in text:
        raise Refuted(f"warned about another variable: {text}")
    text, _ = ctx.expect_logged(LOGGER, _validate, {"VLLM_FLASH_ATTN_VERSION": "2"})
    if "VLLM_FLASH_ATTN_VERSION" not in text:
        raise Refuted(f"warned about another variable: {text}")


def fix_1(ctx):
    # The backend as --attention-backend FLASHINFER (AttentionConfig.backend) and no variable:
    # the setting parses, and the start-up check has nothing to warn about.
    pin_platform()
    from vllm.config.attention import AttentionConfig

    if ctx.call(AttentionConfig, backend="FLASHINFER").backend.name != "FLASHINFER":
        raise Refuted("--attention-backend FLASHINFER not parsed")
    ctx.not_logged(LOGGER, _validate, {})


def fix_3(ctx):
    # --attention-config.flash_attn_version 2 replaces VLLM_FLASH_ATTN_VERSION=2.
    pin_platform()
    from vllm.config.attention import AttentionConfig

    if ctx.call(AttentionConfig, flash_attn_version=2).flash_attn_version != 2:
        raise Refuted("flash_attn_version not kept")
    ctx.not_logged(LOGGER, _validate, {})


def control(ctx):
    # A variable vLLM 0.33 does read passes the same check.
    ctx.not_logged(LOGGER, _validate, {"VLLM_BATCH_INVARIANT": "0"})


def entry_vllm_engine(ctx):
    # VLLM_ATTENTION_BACKEND=FLASHINFER vllm serve <Llama-shaped> (the variable earlier releases read)
    first(ctx, [], env={"VLLM_ATTENTION_BACKEND": "FLASHINFER"})
