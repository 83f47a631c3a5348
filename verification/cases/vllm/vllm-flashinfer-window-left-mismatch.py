"""Gemma-2-style alternating sliding-window and global layers in one KV-cache group on FLASHINFER: build() raises 'Window left is not the same for all layers...'."""

from errkb.verify.case import Refuted
from verification.cases.vllm._vllm_layers import (GEMMA2, build_model_metadata, gemma2_layer_args,
                                                past_flashinfer_checks)

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "requests", "zmq",
                         "flashinfer"], "cuda": True, "arch": "sm90"}
# Everything runs on the H200 itself: vLLM's CudaPlatform reads its capability (9.0), the layers'
# FlashInfer impls and the metadata builders allocate on it. Each batch is a first prefill, which
# on SM90 never runs on TRT-LLM kernels, so build() always applies its hyperparameter checks; the
# steps stop where build() starts filling in its metadata, before any FlashInfer planning.
ALL_SLIDING = dict(GEMMA2, layer_types=["sliding_attention"] * 4)


def reproduce(ctx):
    # --attention-backend FLASHINFER --disable-hybrid-kv-cache-manager: windowed and global layers
    # share one group, whose builder sees window_left 4095 and -1.
    ctx.expect_error(build_model_metadata(ctx, gemma2_layer_args))


def fix_1(ctx):
    # Hybrid KV-cache manager left on: sliding-window and global layers get groups of their own.
    results = ctx.call(build_model_metadata(ctx, gemma2_layer_args, hybrid=True))
    if len(results) < 2:
        ctx.observed = dict(ctx.observed or {}, groups=len(results))
        raise Refuted(f"{len(results)} KV-cache group(s) with the hybrid manager on")
    past_flashinfer_checks(ctx, results)


def fix_2(ctx):
    # --attention-backend TRITON_ATTN, hybrid manager still disabled: the Triton builder takes the
    # mixed group and returns its metadata (FLASH_ATTN's extensions are not part of this build).
    past_flashinfer_checks(ctx, ctx.call(build_model_metadata(ctx, gemma2_layer_args, backend="TRITON_ATTN")))


def fix_3(ctx):
    # --disable-sliding-window: every layer global, one uniform group; as the record warns,
    # max_model_len is capped to the 4096-token window.
    results = ctx.call(build_model_metadata(ctx, gemma2_layer_args, model_args={"disable_sliding_window": True}))
    past_flashinfer_checks(ctx, results)
    capped = [n for n in ctx.notes if n.startswith("max_model_len 4096;")]
    if not capped:
        raise Refuted(f"max_model_len not capped to the window: {ctx.notes}")


def control(ctx):
    # Same settings as the reproduce, but every layer slides with the same window: one group, one
    # window, no error.
    past_flashinfer_checks(ctx, ctx.call(build_model_metadata(ctx, gemma2_layer_args, hf_config=ALL_SLIDING)))
