"""vLLM's engine entry point for `entry_vllm_engine` steps: what `vllm serve MODEL ARGS` (and
`LLM(model, **kwargs)`) does with the user's arguments before the model loads, then the attention
selector for the model's layers under the configuration the engine built.

Stage 1 is vLLM's own code: `EngineArgs.add_cli_args` + `parse_args` (the command line, as `vllm
serve` reads it), `EngineArgs.from_cli_args` and `create_engine_config()` (ModelConfig from the
checkpoint config, CacheConfig, AttentionConfig, the platform's check_and_update_config). The
model is a tiny checkpoint *config* in a temporary folder (`--load-format dummy`,
`--skip-tokenizer-init`). Stage 2 is `get_attn_backend(...)` for one of the model's layers (head
size, dtype, KV-cache dtype, MLA as the model's attention layers pass them), with the engine's
VllmConfig current, as the GPU model runner does when it builds the layers. Between the two lie
the engine core process, the worker and weight loading: they need vLLM's compiled modules.

The architecture is inspected beforehand under vLLM's platform-neutral settings (see engine()).
The platform is vLLM's own CudaPlatform with vllm._C_stable_libtorch stood in (`_vllm_cuda`).
Before anything else the step pins the process platform and puts that stand-in in place
(`prepare`): on a GPU machine the first module that asks for vllm.platforms.current_platform
makes vLLM detect CUDA and import vllm.platforms.cuda, which imports the compiled module at its
top (the first H200 run stopped there, and its half-done imports broke the steps after it).
vLLM's FlashAttention extensions (`_vllm_fa2_C`, `_vllm_fa3_C`) are stood in too, unlike in the
claim steps: a user's vLLM has them, and without them the engine cannot even inspect a model's
architecture (the model modules import vllm.vllm_flash_attn, which refuses to load), so the
launch would stop on this machine's missing build rather than on anything the user sees. Each
entry step runs in a worker process of its own (errkb.verify.runner.worker_group), so the claim
steps, for which the presence of those extensions is the decision under test, never see these
stand-ins, and no step sees what another step's launch imported.
To rehearse on a machine without a GPU, `ERRKB_PRETEND_CUDA=9.0` (errkb.verify.pretend) makes
torch and vLLM's platform detection answer as on an SM90 GPU; such results are never merged.
"""

from __future__ import annotations

import json
import os
import tempfile

from verification.cases.vllm._vllm import pin_platform
from verification.cases.vllm._vllm_cuda import CUDA_STANDINS, DEEPSEEK_V3, model_config, on_cuda

LOGGERS = ("vllm",)

LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 512,
         "intermediate_size": 1024, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 128,
         "num_hidden_layers": 2, "vocab_size": 1024, "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
         "torch_dtype": "bfloat16"}

MODELS = {"llama": LLAMA, "deepseek-v3": DEEPSEEK_V3}
_dirs: dict[str, str] = {}


def model_dir(name: str, **overrides) -> str:
    """A folder holding only the named checkpoint's config.json (with `overrides`), once per process."""
    key = name + json.dumps(overrides, sort_keys=True)
    if key not in _dirs:
        path = os.path.join(tempfile.mkdtemp(prefix="errkb-vllm-"), name)
        os.makedirs(path)
        with open(os.path.join(path, "config.json"), "w") as f:
            json.dump({**MODELS[name], **overrides}, f)
        _dirs[key] = path
    return _dirs[key]


def _layer(config) -> dict:
    """get_attn_backend's arguments for a decoder layer of the engine's model, as its attention
    layer computes them (MLA: one latent head of kv_lora_rank + qk_rope_head_dim)."""
    model = config.model_config
    hf = model.hf_text_config
    if model.use_mla:
        head = hf.kv_lora_rank + hf.qk_rope_head_dim
    else:
        head = model.get_head_size()
    return {"head_size": head, "dtype": model.dtype, "kv_cache_dtype": config.cache_config.cache_dtype,
            "use_mla": model.use_mla, "num_heads": model.get_num_attention_heads(config.parallel_config)}


FA_EXTENSIONS = ("vllm.vllm_flash_attn._vllm_fa2_C", "vllm.vllm_flash_attn._vllm_fa3_C")


def _stand_in_fa_extensions(ctx) -> None:
    """Stand-ins for the FA extension modules that cannot be imported here (noted on the step)."""
    import importlib
    import sys

    from errkb.verify.standin import StandInModule

    stood = []
    for name in FA_EXTENSIONS:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - absent or unloadable: stand in
            for loaded in [m for m in sys.modules if m.startswith("vllm.vllm_flash_attn")]:
                del sys.modules[loaded]  # the package refused to load without them: load it again
            sys.modules[name] = StandInModule(name)
            stood.append(name)
    if stood:
        ctx.note("FlashAttention extensions replaced by errkb stand-ins, as a user's build has them "
                 "(calling them raises): " + ", ".join(stood))


def prepare(ctx) -> None:
    """What must happen before any vLLM module can ask for the platform: the process platform
    pinned to vLLM's UnspecifiedPlatform (so no import on the way resolves it to CUDA and imports
    vllm.platforms.cuda), the stand-in for the compiled vllm._C_stable_libtorch that
    vllm.platforms.cuda imports at its top, then the FlashAttention extensions' stand-ins."""
    import sys

    from errkb.verify.standin import install

    import vllm.platforms as platforms

    if platforms._current_platform is not None and type(platforms._current_platform).__name__ != "UnspecifiedPlatform":
        ctx.note(f"vLLM's platform was already resolved to {type(platforms._current_platform).__name__} "
                 "before the step pinned it")
    pin_platform()
    stood = install(*CUDA_STANDINS)
    if stood or any(getattr(sys.modules.get(n), "__errkb_standin__", False) for n in CUDA_STANDINS):
        note = "compiled modules replaced by errkb stand-ins (calling them raises): " + ", ".join(CUDA_STANDINS)
        if note not in ctx.notes:
            ctx.note(note)
    _stand_in_fa_extensions(ctx)


def engine(ctx, argv: list[str], *, model: str = "llama", env=None, select=True, **overrides):
    """A call for ctx.expect_first: `vllm serve <model> --load-format dummy --skip-tokenizer-init ARGV`
    up to the engine config (stage 1), then, with `select`, the attention selector for the model's
    layer (stage 2). `overrides` change the checkpoint config (e.g. head_dim). Returns the class."""
    def run():
        prepare(ctx)
        # The registry's inspection of the architecture (which interfaces the model class has) imports
        # the model's module, whose layers call compiled ops at import on CUDA; inspected once under
        # vLLM's platform-neutral settings (as the claim steps build ModelConfig), the result is cached
        # per architecture (registry._try_inspect_model_cls) and the engine below reuses it.
        model_config({**MODELS[model], **overrides})
        with on_cuda(ctx, None, env=env):
            from vllm.config import set_current_vllm_config
            from vllm.engine.arg_utils import EngineArgs
            from vllm.utils.argparse_utils import FlexibleArgumentParser
            from vllm.v1.attention.selector import get_attn_backend

            ctx.note(f"vllm serve ({model} config) {' '.join(argv)}" + (f" with {env}" if env else ""))
            parser = EngineArgs.add_cli_args(FlexibleArgumentParser())
            args = parser.parse_args(["--model", model_dir(model, **overrides), "--load-format", "dummy",
                                      "--skip-tokenizer-init", *argv])
            config = EngineArgs.from_cli_args(args).create_engine_config()
            ctx.note("stage 1 passed: the engine config was built (create_engine_config)")
            if not select:
                return config
            layer = _layer(config)
            with set_current_vllm_config(config):
                backend = get_attn_backend(**layer)
            ctx.note(f"stage 2 passed: the selector chose {backend.get_name()} for {layer}")
            return backend
    return run


def first(ctx, argv, **kwargs):
    """ctx.expect_first over engine(...), keeping vLLM's log lines."""
    return ctx.expect_first(engine(ctx, argv, **kwargs), loggers=LOGGERS)
