"""Helpers for the SGLang server-level cases (attention registry, FlashAttention backend, vision).

These call SGLang 0.5.23's own functions. Where a function wants a ModelRunner or a built backend,
the cases hand it a stand-in that carries only the attributes the function reads before its check;
a real one needs a loaded model, KV pools and a GPU.

SGLang's attention backends import sgl_kernel (its compiled kernels) at module level: the
FlashAttention backend for merge_state_v2, and through the model config the quantization modules
(sgl_kernel.scalar_type, sgl_kernel.quantization), the Triton backend sgl_kernel.utils. SGLang
0.5.23 pins sglang-kernel 0.4.10, built for torch 2.14, which cannot load beside this machine's
torch 2.11, so it is not installed here. When sgl_kernel is not importable, `sglang_module` puts
errkb stand-ins (errkb.verify.standin) in its place before importing a backend: importing works,
calling any of it raises StandInReached, so a step that reaches compiled code is an error, never a
verdict. Every step that imports through it notes the stand-ins. The registry and ServerArgs
never touch sgl_kernel, so steps that stop in them see the same code either way.
"""

from __future__ import annotations

import traceback
from contextlib import contextmanager
from types import SimpleNamespace

from errkb.verify.case import Refuted, match_message
from errkb.verify.standin import install, reached

# the compiled modules (and the submodules imported by name) SGLang 0.5.23's attention backends,
# model config and quantization modules import at module level
COMPILED = ("sgl_kernel", "sgl_kernel.scalar_type", "sgl_kernel.quantization", "sgl_kernel.utils")
_stood_in: dict[str, str] = {}  # stood-in module -> why the real one is not used

REGISTRY = "sglang.srt.layers.attention.attention_registry"
FA_BACKEND = "sglang.srt.layers.attention.flashattention_backend"


def _compiled_standins() -> dict[str, str]:
    """Stand in for sgl_kernel once per process, only if the real one cannot be imported."""
    import importlib
    import sys

    if not _stood_in and "sgl_kernel" not in sys.modules:
        try:
            importlib.import_module("sgl_kernel")
        except Exception as exc:  # noqa: BLE001 - ImportError, or OSError from its shared library
            why = f"{type(exc).__name__}: {str(exc)[:200]}"
            for name in [m for m in sys.modules if m == "sgl_kernel" or m.startswith("sgl_kernel.")]:
                del sys.modules[name]  # a half-loaded real package must not mix with the stand-in
            for name in install(*COMPILED):
                _stood_in[name] = why
    return _stood_in


def stand_in_compiled(ctx) -> None:
    """The stand-ins for sgl_kernel when the real one does not load (once per process), noted on
    the step. SGLang imports it on the way to its model config, quantization methods and attention
    backends, so both the claim steps and the launcher's argument resolution need them."""
    stood = _compiled_standins()
    if stood:
        why = next(iter(stood.values()))
        text = (f"compiled modules replaced by errkb stand-ins (calling them raises): {', '.join(stood)} "
                f"(sgl_kernel does not import here: {why})")
        if text not in ctx.notes:
            ctx.note(text)


def sglang_module(ctx, name: str):
    """Import an SGLang module that (indirectly) imports sgl_kernel, with the stand-ins in place
    when the real sgl_kernel does not load; notes them on the step. If it still cannot be
    imported, the step is skipped: it showed nothing."""
    import importlib

    stand_in_compiled(ctx)
    try:
        return importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001
        ctx.skip(f"needs {name} (not importable even with sgl_kernel stood in: {type(exc).__name__}: {str(exc)[:300]})")


def registry():
    import importlib

    return importlib.import_module(REGISTRY)


def create(name, runner):
    """The registry's creator for --attention-backend NAME, called on this runner."""
    return registry().ATTENTION_BACKENDS[name](runner)


def runner(*, mla=False, encoder_decoder=False, server_args=None, **extra):
    """A stand-in ModelRunner for the registry's creators: whether the model is served as MLA,
    whether it is an encoder-decoder model, the ServerArgs the creator reads, and any `extra`."""
    model_config = SimpleNamespace(is_encoder_decoder=encoder_decoder,
                                   hf_config=SimpleNamespace(architectures=["StandInForCausalLM"]))
    return SimpleNamespace(use_mla_backend=mla, model_config=model_config, server_args=server_args,
                           init_new_workspace=False, **extra)


@contextmanager
def published(**fields):
    """Publish ServerArgs(model_path="dummy", **fields) as the process's config, so get_spec(),
    get_parallel(), get_mm() ... answer from these flags, and put the previous context back on
    exit. Like SGLang's own test hook (RuntimeContext.override_server_args) but without its
    resolution pass, which for a dummy model does nothing and only imports the model-config
    machinery (quantization methods that need sgl_kernel on a CUDA machine)."""
    from sglang.srt.runtime_context import get_context, restore_context, snapshot_context
    from sglang.srt.server_args import ServerArgs

    saved = snapshot_context()
    server_args = ServerArgs(model_path="dummy", **fields)
    try:
        get_context().set_server_args(server_args)
        yield server_args
    finally:
        restore_context(saved)


def reaches(ctx, module: str, fn, *args, **kwargs):
    """A call the record says is accepted: it must not raise the record's error, and must get as
    far as `module` (the backend the creator goes on to import and build). With a stand-in runner
    the build itself usually stops on an attribute the stand-in lacks, or on an import this
    machine lacks; that failure is kept as a note, since the creator's checks all come before it.
    If the backend module cannot even be imported, the step is skipped: it showed nothing. The
    backend is imported with sgl_kernel's stand-ins (`sglang_module`); a build that calls into one
    is an error. Returns the built backend, or None."""
    path = module.replace(".", "/") + ".py"
    sglang_module(ctx, module)
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - looked at below
        if reached(exc):
            raise  # it reached compiled code that is not here: the step showed nothing
        if match_message(ctx.record["template"], str(exc)):
            ctx.observed = {"class": type(exc).__name__, "message": str(exc)[:2000]}
            raise Refuted("the call raised the record's error") from exc
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(path)]
        inside = bool(frames) and frames[-1].name != "<module>"
        if not inside and (isinstance(exc, ImportError) or frames):
            # the backend module itself cannot load here: that shows nothing about the check
            ctx.skip(f"{module} cannot be imported here ({type(exc).__name__}: {str(exc)[:200]}), "
                     "so the accepted call cannot be followed into it")
        if not frames:
            raise  # it stopped before the backend: not what the step is about, so an error
        ctx.note(f"got past the check into {module} ({frames[-1].name}, line {frames[-1].lineno}), "
                 f"then stopped: {type(exc).__name__}: {str(exc)[:300]}")
        return None


def fa_backend(ctx, fa_impl_ver: int, **state):
    """A FlashAttentionBackend object with only the state the checked method reads.
    (Its real __init__ needs a whole ModelRunner: KV and req_to_token pools, published config.)
    --attention-backend fa3 builds it with fa_impl_ver=3, fa4 with fa_impl_ver=4."""
    cls = sglang_module(ctx, FA_BACKEND).FlashAttentionBackend
    backend = cls.__new__(cls)
    backend.fa_impl_ver = fa_impl_ver
    for name, value in state.items():
        setattr(backend, name, value)
    return backend


def decode_standins(ctx, fa_impl_ver: int, **state):
    """(backend, q, layer, forward_batch) for a forward_decode call whose K/V are already in the
    cache (k=v=None, as when the layer saved them itself): a plain full-attention decoder layer,
    no speculative batch, no local attention, no MXFP8 cache unless `state` says so."""
    fa = sglang_module(ctx, FA_BACKEND)
    from sglang.srt.layers.radix_attention import AttentionType

    state = {"use_mla": False, "kv_cache_is_mxfp8": False, "local_attn_builder": None, "topk": 0,
             "forward_metadata": fa.FlashAttentionMetadata(), "full_cg_prefill_metadata": None, **state}
    backend = fa_backend(ctx, fa_impl_ver, **state)
    layer = SimpleNamespace(layer_id=0, sliding_window_size=-1, attn_type=AttentionType.DECODER,
                            is_cross_attention=False)
    q = ctx.torch.zeros(1, 4 * 128, dtype=ctx.torch.bfloat16)
    return backend, q, layer, SimpleNamespace(spec_info=None)


def mxfp8_pool(ctx):
    """A stand-in MXFP8 KV pool: all the scale-factor step asks of it is a layer's K/V scale
    buffers. Returns (pool, (k_scales, v_scales))."""
    t = ctx.torch
    k_sf, v_sf = t.zeros(8, dtype=t.uint8), t.zeros(8, dtype=t.uint8)
    return SimpleNamespace(get_kv_scale_buffer=lambda layer_id: (k_sf, v_sf)), (k_sf, v_sf)


def fa4_mxfp8_scales_reach_the_kernel(ctx):
    """An fa4 instance on an MXFP8 pool, given the layer's Q scales: the scale-factor step hands
    the kernel those Q scales with the pool's K and V scales. (Checked on the method that builds
    them: the rest of forward_decode needs a real pool and batch.)"""
    pool, (k_sf, v_sf) = mxfp8_pool(ctx)
    backend, _, layer, batch = decode_standins(ctx, fa_impl_ver=4, kv_cache_is_mxfp8=True, token_to_kv_pool=pool)
    q_scales = ctx.torch.ones(1, 4, 4)
    kwargs = ctx.call(backend._mxfp8_sf_kwargs, layer, batch, q_scales)
    if not (kwargs.get("sfq") is q_scales and kwargs.get("sfk") is k_sf and kwargs.get("sfv") is v_sf):
        raise Refuted(f"unexpected kernel arguments {sorted(kwargs)}")


def no_scales_without_mxfp8(ctx, fa_impl_ver):
    """--kv-cache-dtype auto: no block scales are asked for, so nothing is refused."""
    backend, _, layer, batch = decode_standins(ctx, fa_impl_ver=fa_impl_ver, kv_cache_is_mxfp8=False)
    if ctx.call(backend._mxfp8_sf_kwargs, layer, batch, None) != {}:
        raise Refuted("scale factors requested without an MXFP8 cache")
