"""Layers of one KV-cache group that differ in logits soft-cap on FLASHINFER: build() fails its assertion 'FlashInfer backend currently only supports models in which all layers share...'."""

from verification.cases.vllm._vllm_layers import (GEMMA2, build_model_metadata, gemma2_layer_args,
                                                past_flashinfer_checks)

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "requests", "zmq",
                         "flashinfer"], "cuda": True, "arch": "sm90"}
# Runs on the H200 itself (see vllm-flashinfer-window-left-mismatch): a first-prefill batch, which
# on SM90 is never served by TRT-LLM kernels, and the steps stop where build() starts filling in
# its metadata. The model: Gemma-2-shaped, all four layers global (one window), so only the
# changed field differs between layers.
CONFIG = dict(GEMMA2, layer_types=["full_attention"] * 4, query_pre_attn_scalar=64)


def no_cap_on_layer_1(model_config):
    # A custom variant whose second layer does not soft-cap its logits.
    return gemma2_layer_args(model_config, {1: {"logits_soft_cap": None}})


def other_scale_on_layer_2(model_config):
    # A variant whose third layer scales by head_dim ** -0.5 (1/sqrt(128)) instead of 1/sqrt(64).
    return gemma2_layer_args(model_config, {2: {"scale": 128 ** -0.5}})


def reproduce(ctx):
    # A layer without the soft-cap, then (separately) a layer with another softmax scale.
    ctx.expect_error(build_model_metadata(ctx, no_cap_on_layer_1, hf_config=CONFIG))
    ctx.expect_error(build_model_metadata(ctx, other_scale_on_layer_2, hf_config=CONFIG))


def fix_1(ctx):
    # --attention-backend TRITON_ATTN: the Triton builder takes the same layers and returns metadata.
    past_flashinfer_checks(ctx, ctx.call(build_model_metadata(
        ctx, no_cap_on_layer_1, hf_config=CONFIG, backend="TRITON_ATTN")))


def control(ctx):
    # All layers alike (Gemma-2's own settings): the FlashInfer build passes its checks.
    past_flashinfer_checks(ctx, ctx.call(build_model_metadata(
        ctx, gemma2_layer_args, hf_config=CONFIG)))
