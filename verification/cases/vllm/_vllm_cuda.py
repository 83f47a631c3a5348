"""Helpers for the vLLM cases that run vLLM's own CudaPlatform (the selection code as it runs on a
CUDA machine), rather than the pinned UnspecifiedPlatform of `_vllm`.

vllm/platforms/cuda.py imports the compiled vllm._C_stable_libtorch at module level (line 23;
its optional vllm._qutlass_C import is wrapped in suppress(ImportError) and needs nothing). That
is the only compiled module between the selection code and this machine: a stand-in takes its
place (errkb.verify.standin), and nothing on the selection path calls into it. The FlashAttention
extensions (vllm.vllm_flash_attn._vllm_fa2_C/_vllm_fa3_C) get no stand-in: whether they import is
how vLLM decides FA2/FA3 support, so this tree's FLASH_ATTN (and FLEX_ATTENTION, TURBOQUANT, which
import it) is unavailable, as in any build without them.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from unittest import mock

from errkb.verify.case import Refuted
from verification.cases.vllm._vllm import fa_interface, forget_flashinfer_probes, forget_once_logs, pin_platform

CUDA_STANDINS = ("vllm._C_stable_libtorch",)
# Modules whose import-time code branches on the platform they see: fa_utils imports
# vllm.vllm_flash_attn only on CUDA (there it fails in this tree), so a copy that the pinned steps
# imported under UnspecifiedPlatform is set aside for a CUDA step and put back afterwards.
# vllm.model_executor.layers.attention (which every MLA backend imports) imports fa_utils through
# its mm_encoder_attention; building a ModelConfig (model_config below) loads it under the pinned
# platform, so it is set aside too, and a CUDA step sees the import as a fresh process would.
_PLATFORM_BRANCHED = ("vllm.v1.attention.backends.fa_utils", "vllm.v1.attention.backends.flash_attn",
                      "vllm.v1.attention.backends.flex_attention", "vllm.v1.attention.backends.turboquant_attn",
                      "vllm.vllm_flash_attn", "vllm.vllm_flash_attn.flash_attn_interface",
                      "vllm.model_executor.layers.attention",
                      "vllm.model_executor.layers.attention.mm_encoder_attention")
_CUDA = []


def cuda_platform_class(ctx):
    """vLLM's CudaPlatform class (NvmlCudaPlatform where NVML answers), imported with the stand-in
    for vllm._C_stable_libtorch; noted in the step."""
    import sys

    from errkb.verify.standin import install, is_standin

    pin_platform()
    install(*CUDA_STANDINS)
    stood = [n for n in CUDA_STANDINS if is_standin(sys.modules.get(n))]
    note = "compiled modules replaced by errkb stand-ins (calling them raises): " + ", ".join(stood)
    if note not in ctx.notes:
        ctx.note(note)
    from vllm.platforms.cuda import CudaPlatform

    return CudaPlatform


@contextmanager
def on_cuda(ctx, capability=None, *, env=None, hf_config=None, model_args=None, configs=None, **attention_config):
    """Make vLLM's own CUDA platform the platform every vLLM module sees, for one step.

    It reads the GPU's compute capability itself (NVML or torch.cuda). `capability=(major, minor)`
    replaces only that reading, for steps gated to that GPU. The current VllmConfig is vLLM's own
    VllmConfig with AttentionConfig(**attention_config) and, with `hf_config` (a checkpoint's
    config.json as a dict), vLLM's ModelConfig of that checkpoint (`model_args`: further ModelConfig
    fields, e.g. disable_sliding_window); `configs` gives further VllmConfig fields (cache_config,
    scheduler_config, ...); `env` sets VLLM_* variables.
    Afterwards every module bound to it is bound to the pinned platform again."""
    import sys

    CudaPlatform = cuda_platform_class(ctx)
    import vllm.platforms as platforms
    from vllm.config import VllmConfig, set_current_vllm_config
    from vllm.config.attention import AttentionConfig
    from vllm.platforms.interface import DeviceCapability

    pinned = platforms._current_platform
    model = {}
    if hf_config is not None:
        with mock.patch.dict(os.environ, env or {}):
            model["model_config"] = model_config(hf_config, **(model_args or {}))
    if not _CUDA:
        _CUDA.append(CudaPlatform())
    cuda = _CUDA[0]
    patches = [mock.patch.dict(os.environ, env or {}), mock.patch.object(platforms, "_current_platform", cuda)]
    if capability is not None:
        cap = DeviceCapability(*capability)
        patches.append(mock.patch.object(CudaPlatform, "get_device_capability",
                                         classmethod(lambda cls, device_id=0: cap)))
    aside = {n: sys.modules.pop(n) for n in _PLATFORM_BRANCHED if n in sys.modules}
    put_back_ops = set_aside_custom_ops(aside)

    def rebind(old, new):
        # Only modules that bound the name themselves (`from vllm.platforms import current_platform`);
        # vllm.platforms serves it through its module __getattr__, which must stay in charge.
        for name, module in list(sys.modules.items()):
            if name.startswith("vllm") and vars(module).get("current_platform") is old:
                module.current_platform = new

    for p in patches:
        p.start()
    try:
        rebind(pinned, cuda)
        _forget_process_state()
        config = VllmConfig(attention_config=AttentionConfig(**attention_config), **model, **(configs or {}))
        with set_current_vllm_config(config):
            yield CudaPlatform
    finally:
        rebind(cuda, pinned)
        for p in reversed(patches):
            p.stop()
        for n in _PLATFORM_BRANCHED:
            sys.modules.pop(n, None)
        sys.modules.update(aside)
        put_back_ops()
        _forget_process_state()


def set_aside_custom_ops(modules) -> callable:
    """Unregister the CustomOps that `modules` (set aside above) registered at import, and return
    what registers them again. Importing such a module afresh runs its `@CustomOp.register(name)`
    again, and vLLM's registry refuses a name twice ("Duplicate op name: mm_encoder_attn", seen on
    the H200 when a model config had loaded mm_encoder_attention before the CUDA step)."""
    import sys

    custom_op = sys.modules.get("vllm.model_executor.custom_op")
    registries = [r for r in (getattr(custom_op, "op_registry", None), getattr(custom_op, "op_registry_oot", None))
                  if isinstance(r, dict)]
    saved = [dict(r) for r in registries]
    for registry in registries:
        for name, op in list(registry.items()):
            if getattr(op, "__module__", None) in modules:
                del registry[name]

    def put_back():
        for registry, before in zip(registries, saved):
            registry.clear()
            registry.update(before)
    return put_back


def _forget_process_state():
    """What vLLM remembers per process and a step must decide afresh: once-only log lines, the
    FlashInfer probes, and the MLA prefill auto-selection (cached per selector config)."""
    import sys

    forget_once_logs()
    forget_flashinfer_probes()
    prefill = sys.modules.get("vllm.v1.attention.backends.mla.prefill.selector")
    if prefill is not None:
        prefill._auto_select_mla_prefill_backend.cache_clear()


def model_config(hf_config: dict, dtype="bfloat16", **fields):
    """vLLM's ModelConfig for a local checkpoint directory holding only `hf_config` as its
    config.json (no weights, no tokenizer): what `vllm serve DIR --dtype DTYPE` resolves.

    It is built under the pinned platform, before a step switches to CUDA: ModelConfig reads the
    model class's static interface flags (pipeline parallel, hybrid, ...) and caches them, which
    imports vLLM's model loader, and that under CUDA imports vllm_flash_attn (absent here). The
    class itself is inspected in a fresh Python subprocess (model_executor/models/registry.py,
    _run_in_subprocess), which on a GPU host would resolve vLLM's CUDA platform and need the
    compiled vllm._C_stable_libtorch; VLLM_TARGET_DEVICE=cpu, set only while the config is built
    (only vllm/platforms/__init__.py reads it), makes it resolve the CPU platform instead. The
    flags are class attributes, and what the steps read (dtype given explicitly, the MLA head
    dimensions, use_mla, head size) comes from config.json and the environment."""
    import json
    import tempfile

    from vllm.config import ModelConfig

    path = os.path.join(tempfile.mkdtemp(prefix="errkb-vllm-"), "model")
    os.makedirs(path)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(hf_config, f)
    with mock.patch.dict(os.environ, {"VLLM_TARGET_DEVICE": "cpu"}):
        return ModelConfig(model=path, skip_tokenizer_init=True, dtype=dtype, **fields)


# A DeepSeek-V3-shaped checkpoint config, shrunk to one layer: its MLA layout (qk_nope 128,
# qk_rope 64, v 128, latent 512 + 64) is what the MLA selectors read.
DEEPSEEK_V3 = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 256,
               "intermediate_size": 512, "moe_intermediate_size": 64, "num_hidden_layers": 1,
               "num_attention_heads": 4, "num_key_value_heads": 4, "kv_lora_rank": 512, "q_lora_rank": 128,
               "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 4,
               "num_experts_per_tok": 2, "n_shared_experts": 1, "first_k_dense_replace": 1, "vocab_size": 1000,
               "max_position_embeddings": 4096, "torch_dtype": "bfloat16", "rope_theta": 10000.0,
               "rms_norm_eps": 1e-6}


def selector_config(head_size=128, dtype="bfloat16", kv_cache_dtype="auto", block_size=None, **flags):
    """vLLM's AttentionSelectorConfig for one layer, as get_attn_backend builds it."""
    import torch
    from vllm.v1.attention.selector import AttentionSelectorConfig

    return AttentionSelectorConfig(head_size=head_size, dtype=getattr(torch, dtype),
                                   kv_cache_dtype=kv_cache_dtype, block_size=block_size, **flags)


def _backend_path(ctx, CudaPlatform, backend, layer):
    from vllm.v1.attention.backends.registry import AttentionBackendEnum

    forced = AttentionBackendEnum[backend] if backend else None
    path = CudaPlatform.get_attn_backend_cls(forced, selector_config(**layer))
    ctx.note(f"selected {path} on capability {CudaPlatform.get_device_capability()}")
    return path


def select_backend(ctx, backend=None, *, capability=None, env=None, attention=None, **layer):
    """A call of CudaPlatform.get_attn_backend_cls for a forced `backend` (an AttentionBackendEnum
    name, parsed as --attention-backend parses it) or None for auto-selection; returns the class path."""
    def run():
        with on_cuda(ctx, capability, env=env, **(attention or {})) as CudaPlatform:
            return _backend_path(ctx, CudaPlatform, backend, layer)
    return run


def backend_impl(ctx, backend, impl_args, *, capability=None, env=None, attention=None, **layer):
    """The forced `backend`, selected for the layer by CudaPlatform.get_attn_backend_cls, then its
    impl class made as vLLM's Attention/MLAAttention layers make it (selector.py resolves the class
    path; the layer passes the --kv-cache-dtype and its own arguments `impl_args` to get_impl_cls()).
    The impl's constructor runs its own platform checks; returns the impl."""
    def run():
        with on_cuda(ctx, capability, env=env, **(attention or {})) as CudaPlatform:
            from vllm.utils.import_utils import resolve_obj_by_qualname

            path = _backend_path(ctx, CudaPlatform, backend, layer)
            selected(ctx, path, backend)
            impl = resolve_obj_by_qualname(path).get_impl_cls()(
                kv_cache_dtype=layer.get("kv_cache_dtype", "auto"), **impl_args)
            ctx.note(f"{type(impl).__name__} built with kv_cache_dtype {impl.kv_cache_dtype}")
            return impl
    return run


# A decoder layer's TritonAttentionImpl arguments (Llama-shaped: 8 query and 8 KV heads of 128).
DECODER_IMPL = {"num_heads": 8, "head_size": 128, "scale": 128 ** -0.5, "num_kv_heads": 8,
                "alibi_slopes": None, "sliding_window": None}


def mla_impl_args(cfg=DEEPSEEK_V3):
    """What MLAAttention passes an MLA impl for the checkpoint config `cfg` (one latent KV head of
    kv_lora_rank + qk_rope_head_dim; the impl constructors only keep kv_b_proj, so none is made)."""
    nope, rope = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"]
    return {"num_heads": cfg["num_attention_heads"], "head_size": cfg["kv_lora_rank"] + rope,
            "scale": (nope + rope) ** -0.5, "num_kv_heads": 1, "alibi_slopes": None, "sliding_window": None,
            "logits_soft_cap": None, "attn_type": "decoder", "kv_sharing_target_layer_name": None,
            "q_lora_rank": cfg["q_lora_rank"], "kv_lora_rank": cfg["kv_lora_rank"], "qk_nope_head_dim": nope,
            "qk_rope_head_dim": rope, "qk_head_dim": nope + rope, "v_head_dim": cfg["v_head_dim"],
            "kv_b_proj": None}


def check_model_dtype(ctx, dtype, *, capability=None, hf_config=DEEPSEEK_V3):
    """The GPU worker's dtype check at init (v1/worker/gpu_worker.py: current_platform
    .check_if_supports_dtype on the ModelConfig's dtype), for `--dtype dtype` on checkpoint `hf_config`."""
    def run():
        with on_cuda(ctx, capability, hf_config=hf_config, model_args={"dtype": dtype}) as CudaPlatform:
            import vllm.platforms
            from vllm.config import get_current_vllm_config

            resolved = get_current_vllm_config().model_config.dtype
            vllm.platforms.current_platform.check_if_supports_dtype(resolved)
            ctx.note(f"model dtype {resolved} accepted on capability {CudaPlatform.get_device_capability()}")
            return resolved
    return run


def selected(ctx, path, name):
    """The selection returned the class path of backend `name`."""
    from vllm.v1.attention.backends.registry import AttentionBackendEnum

    want = AttentionBackendEnum[name].value
    if path != want:
        ctx.observed = dict(ctx.observed or {}, returned=path)
        raise Refuted(f"selected {path}, not {name} ({want})")


def mla_prefill_backend(ctx, *, capability=None, env=None, hf_config=DEEPSEEK_V3, **attention):
    """A call of vLLM's get_mla_prefill_backend on the current VllmConfig (the checkpoint config
    `hf_config`, --attention-config fields `attention`); returns the backend's name."""
    def run():
        with on_cuda(ctx, capability, env=env, hf_config=hf_config, **attention) as CudaPlatform:
            from vllm.config import get_current_vllm_config
            from vllm.v1.attention.backends.mla.prefill.selector import get_mla_prefill_backend

            name = get_mla_prefill_backend(get_current_vllm_config()).get_name()
            ctx.note(f"MLA prefill backend {name} on capability {CudaPlatform.get_device_capability()}")
            return name
    return run


def require_fa_extensions(ctx):
    """Skip the step unless this vLLM build's FlashAttention extensions import (vLLM's own
    FA2_AVAILABLE/FA3_AVAILABLE flags): without them FLASH_ATTN cannot load, for a build reason."""
    pin_platform()
    iface = fa_interface()
    if not (iface.FA2_AVAILABLE or iface.FA3_AVAILABLE):
        ctx.skip("needs a vLLM build with its FlashAttention extensions (_vllm_fa2_C or _vllm_fa3_C): neither "
                 "imports in this tree, so vllm.vllm_flash_attn and every backend module that imports it fail to load")
