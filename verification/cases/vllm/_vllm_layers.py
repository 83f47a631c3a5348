"""Helpers for the vLLM cases on FlashInfer's metadata builder: a model's real Attention layers,
their KV-cache groups and each group's metadata build, under vLLM's own CudaPlatform
(`_vllm_cuda.on_cuda`). The builder's per-layer hyperparameter checks run as vLLM runs them; a
FlashInfer build that gets past them stops where it starts filling in its metadata, before any
FlashInfer planning, kernel or JIT (`ChecksPassed`)."""

from __future__ import annotations

from unittest import mock

from errkb.verify.case import Refuted
from verification.cases.vllm._vllm import pin_platform
from verification.cases.vllm._vllm_cuda import model_config, on_cuda


# A Gemma-2-shaped checkpoint config, shrunk to four layers that alternate sliding-window (4096)
# and global attention as `layer_types` says; every layer soft-caps its logits at 50 and scales by
# query_pre_attn_scalar ** -0.5.
GEMMA2 = {"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "hidden_size": 256,
          "intermediate_size": 512, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
          "head_dim": 128, "query_pre_attn_scalar": 128, "sliding_window": 4096,
          "layer_types": ["sliding_attention", "full_attention"] * 2, "attn_logit_softcapping": 50.0,
          "final_logit_softcapping": 30.0, "max_position_embeddings": 8192, "vocab_size": 1000,
          "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "torch_dtype": "bfloat16"}


def gemma2_layer_args(model_config, overrides=None):
    """The arguments vLLM's Gemma-2 model gives each layer's Attention (models/gemma2.py,
    Gemma2Attention): heads and head size from the checkpoint config, scale
    query_pre_attn_scalar ** -0.5, its logit soft-cap, and the checkpoint's sliding window on the
    layers `layer_types` marks as sliding (read after ModelConfig has applied
    --disable-sliding-window). `overrides` maps a layer index to fields replaced on that layer."""
    cfg = model_config.hf_text_config
    layers = []
    for i, kind in enumerate(cfg.layer_types):
        args = dict(num_heads=cfg.num_attention_heads, head_size=cfg.head_dim,
                    scale=cfg.query_pre_attn_scalar ** -0.5, num_kv_heads=cfg.num_key_value_heads,
                    logits_soft_cap=cfg.attn_logit_softcapping,
                    per_layer_sliding_window=cfg.sliding_window if kind == "sliding_attention" else None)
        args.update((overrides or {}).get(i, {}))
        layers.append(args)
    return layers


def attention_layer_class():
    """vLLM's Attention layer class (model_executor/layers/attention/attention.py), imported under
    the pinned platform. Its package's __init__ also loads mm_encoder_attention, which imports fa_utils,
    and that under CUDA imports vllm_flash_attn, absent from this build (see _PLATFORM_BRANCHED);
    attention.py itself does not branch on the platform at import and reads current_platform only
    when a layer is made, which on_cuda rebinds to vLLM's CudaPlatform."""
    pin_platform()
    from vllm.model_executor.layers.attention.attention import Attention

    return Attention


def attention_layers(Attention, layer_args):
    """vLLM's own Attention layer for each entry of `layer_args`, built as a model builds them under
    the current VllmConfig: the layer selects its backend (the forced one), makes its backend impl
    and registers itself in compilation_config.static_forward_context under its prefix. Layers are
    made while the model dtype is torch's default dtype, as vLLM's model loader does."""
    import torch
    from vllm.config import get_current_vllm_config

    config = get_current_vllm_config()
    before = torch.get_default_dtype()
    torch.set_default_dtype(config.model_config.dtype)
    try:
        layers = {}
        for i, args in enumerate(layer_args):
            prefix = f"model.layers.{i}.self_attn.attn"
            layers[prefix] = Attention(cache_config=config.cache_config, prefix=prefix, **args)
        return layers
    finally:
        torch.set_default_dtype(before)


def kv_cache_groups(layers):
    """vLLM's KV-cache groups for `layers` (v1/core/kv_cache_planning.get_kv_cache_groups on each
    layer's own KV-cache spec): with the hybrid KV-cache manager disabled it first turns
    sliding-window specs into full-attention ones, so windowed and global layers share a group.
    First the KV-cache layout is resolved from the layers' backends and specs and recorded on the
    cache config, as the engine core does before it plans the cache (v1/engine/core.py)."""
    from vllm.config import get_current_vllm_config
    from vllm.v1.attention.backends.utils import (get_supported_kv_cache_layouts, record_kv_cache_layout,
                                                  resolve_kv_cache_layout)
    from vllm.v1.core.kv_cache_planning import get_kv_cache_groups

    config = get_current_vllm_config()
    specs = {name: layer.get_kv_cache_spec(config) for name, layer in layers.items()}
    backends = {layer.attn_backend for layer in layers.values()}
    supported = [layout.name for layout in get_supported_kv_cache_layouts(backends)]
    layout = resolve_kv_cache_layout(config, [supported], list(specs.values()))
    record_kv_cache_layout(config.cache_config, layout.name)
    return get_kv_cache_groups(config, specs)


class ChecksPassed(Exception):
    """Raised where build() starts filling in its FlashInferMetadata (its Step 2), which follows the
    per-batch hyperparameter checks: reaching it means the batch passed them, and nothing of
    FlashInfer's planning (kernels, JIT) runs after it."""


def prefill_batch(device, *, num_reqs=2, tokens=8, block_size=16):
    """CommonAttentionMetadata of a first-step prefill of `num_reqs` prompts of `tokens` tokens each,
    every prompt in its own KV-cache block, as vLLM's model runner hands it to a metadata builder."""
    import torch
    from vllm.v1.attention.backend import CommonAttentionMetadata

    starts = torch.arange(0, (num_reqs + 1) * tokens, tokens, dtype=torch.int32)
    seq_lens = torch.full((num_reqs,), tokens, dtype=torch.int32)
    blocks = torch.arange(num_reqs, dtype=torch.int32).reshape(num_reqs, 1)
    slots = (blocks * block_size + torch.arange(tokens, dtype=torch.int32)).reshape(-1).long()
    return CommonAttentionMetadata(query_start_loc=starts.to(device), query_start_loc_cpu=starts,
                                   seq_lens=seq_lens.to(device), num_reqs=num_reqs,
                                   num_actual_tokens=num_reqs * tokens, max_query_len=tokens, max_seq_len=tokens,
                                   block_table_tensor=blocks.to(device), slot_mapping=slots.to(device))


def build_group_metadata(ctx, group, layers):
    """One KV-cache group's metadata builder (the backend's own builder class, made as vLLM's GPU
    model runner makes it) and its build() of a prefill batch. Returns what build() produced, or
    ChecksPassed when a FlashInfer build got past its hyperparameter checks; the builder's view of
    the group is noted."""
    import torch
    from vllm.config import get_current_vllm_config

    backend = layers[group.layer_names[0]].attn_backend
    device = torch.device(ctx.device)
    builder = backend.get_builder_cls()(group.kv_cache_spec, group.layer_names, get_current_vllm_config(), device)
    seen = getattr(builder, "global_hyperparameters", None)
    ctx.note(f"{backend.get_name()} group of {len(group.layer_names)} layers ({type(group.kv_cache_spec).__name__})"
             + (f": window_left {seen.window_left}, same window {seen.has_same_window_lefts}, "
                f"same all {seen.has_same_all_params}" if seen is not None else ""))
    batch = prefill_batch(device, block_size=group.kv_cache_spec.block_size)
    if backend.get_name() != "FLASHINFER":
        return builder.build(common_prefix_len=0, common_attn_metadata=batch)

    def past_checks(**fields):
        raise ChecksPassed(fields)

    with mock.patch("vllm.v1.attention.backends.flashinfer.FlashInferMetadata", past_checks):
        try:
            return builder.build(common_prefix_len=0, common_attn_metadata=batch)
        except ChecksPassed as passed:
            return passed


def build_model_metadata(ctx, layer_args, *, hf_config=GEMMA2, model_args=None, hybrid=False,
                         backend="FLASHINFER", block_size=16):
    """A step: under vLLM's CUDA platform and a VllmConfig for `hf_config` with --attention-backend
    `backend`, --block-size `block_size`, and --disable-hybrid-kv-cache-manager unless `hybrid`,
    build the model's Attention layers (`layer_args(model_config)` gives their arguments), group
    them, and build each group's metadata for a prefill batch. Returns the list of results."""
    def run():
        from vllm.config import CacheConfig, SchedulerConfig

        Attention = attention_layer_class()
        configs = {"cache_config": CacheConfig(block_size=block_size),
                   "scheduler_config": SchedulerConfig.default_factory(disable_hybrid_kv_cache_manager=not hybrid)}
        with on_cuda(ctx, hf_config=hf_config, model_args=model_args, configs=configs, backend=backend):
            from vllm.config import get_current_vllm_config

            config = get_current_vllm_config()
            layers = attention_layers(Attention, layer_args(config.model_config))
            groups = kv_cache_groups(layers)
            ctx.note(f"max_model_len {config.model_config.max_model_len}; {len(groups)} KV-cache group(s)")
            return [build_group_metadata(ctx, g, layers) for g in groups]
    return run


def past_flashinfer_checks(ctx, results):
    """Every group's FlashInfer build got past the hyperparameter checks (or, for another backend,
    returned its metadata)."""
    bad = [r for r in results if r is None or isinstance(r, Exception) and not isinstance(r, ChecksPassed)]
    if not results or bad:
        raise Refuted(f"builds returned {results!r}")
