"""Helpers for the vLLM cases: they call vLLM 0.33.0's own pure-Python selection code.

vLLM's compiled extensions (vllm._C*, vllm.vllm_flash_attn._vllm_fa2_C/_vllm_fa3_C) are not
installed here, and resolving `vllm.platforms.current_platform` on a CUDA machine imports
vllm.platforms.cuda, which needs vllm._C_stable_libtorch. So before anything from vLLM is
imported the process platform is pinned to vLLM's own UnspecifiedPlatform (no CUDA import
side effects), and a step that asks "what does vLLM decide on GPU X" hands the functions a
Platform subclass whose only override is the device capability the step names: the capability
the CUDA platform would report on that GPU. The claims below are about that decision logic,
which reads nothing else from the GPU.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from types import SimpleNamespace
from unittest import mock

from errkb.verify.case import Refuted

FA_UTILS = "vllm.v1.attention.backends.fa_utils"
FA_IFACE = "vllm.vllm_flash_attn.flash_attn_interface"


def pin_platform():
    """Make vllm.platforms.current_platform vLLM's UnspecifiedPlatform unless already resolved."""
    import vllm.platforms as platforms

    if platforms._current_platform is None:
        from vllm.platforms.interface import UnspecifiedPlatform

        platforms._current_platform = UnspecifiedPlatform()
    return platforms._current_platform


def cuda_platform(major: int, minor: int = 0):
    """A vLLM Platform reporting PlatformEnum.CUDA and compute capability major.minor; every
    capability query (has_device_capability, is_device_capability_family ...) is vLLM's own."""
    from vllm.platforms.interface import DeviceCapability, Platform, PlatformEnum

    class StandInCudaPlatform(Platform):
        _enum = PlatformEnum.CUDA
        device_name = "cuda"
        device_type = "cuda"

        @classmethod
        def get_device_capability(cls, device_id: int = 0):
            return DeviceCapability(major=major, minor=minor)

    return StandInCudaPlatform()


def fa_utils():
    import importlib

    pin_platform()
    return importlib.import_module(FA_UTILS)


def fa_interface():
    """vllm.vllm_flash_attn.flash_attn_interface, the module whose FA{2,3,4}_AVAILABLE flags
    record which FlashAttention extensions the build has. This tree has none, and the package's
    __init__ (vllm/vllm_flash_attn/__init__.py:33) then raises ImportError after loading the
    module; the loaded module is what on_gpu() sets the build's flags on."""
    import importlib
    import sys

    try:
        return importlib.import_module(FA_IFACE)
    except ImportError:
        if FA_IFACE not in sys.modules:
            raise
        return sys.modules[FA_IFACE]


def vllm_config(flash_attn_version=None):
    """A stand-in VllmConfig carrying what get_flash_attn_version reads: vLLM's own
    AttentionConfig (as --attention-config.flash_attn_version N builds it), no model or cache
    config, no decode context parallelism."""
    pin_platform()
    from vllm.config.attention import AttentionConfig

    return SimpleNamespace(attention_config=AttentionConfig(flash_attn_version=flash_attn_version),
                           model_config=None, cache_config=None,
                           parallel_config=SimpleNamespace(decode_context_parallel_size=1))


@contextmanager
def on_gpu(major: int, minor: int = 0, *, built=(2, 3, 4), flash_attn_version=None, env=None):
    """Run get_flash_attn_version as on a GPU of capability major.minor, with a vLLM build whose
    FlashAttention extensions `built` lists (FA2/FA3 are compiled modules, FA4 the CuTe sources;
    the unavailability reasons stay this tree's own),
    --attention-config.flash_attn_version as given, and extra VLLM_* environment variables."""
    fa = fa_utils()  # pins the platform before anything below imports vllm.config
    import vllm.platforms as platforms
    from vllm.config import set_current_vllm_config

    iface = fa_interface()
    platform = cuda_platform(major, minor)
    patches = [mock.patch.object(fa, "current_platform", platform),
               mock.patch.object(platforms, "_current_platform", platform),
               mock.patch.dict(os.environ, env or {})]
    for n in (2, 3, 4):
        patches.append(mock.patch.object(iface, f"FA{n}_AVAILABLE", n in built))
    for p in patches:
        p.start()
    try:
        forget_once_logs()
        with set_current_vllm_config(vllm_config(flash_attn_version)):
            yield fa
    finally:
        for p in reversed(patches):
            p.stop()


def forget_once_logs():
    """vLLM's warning_once/error_once remember what they logged in this process; a step must
    see its own first call."""
    import vllm.logger as vlog

    for name in ("_print_debug_once", "_print_info_once", "_print_warning_once", "_print_error_once"):
        getattr(vlog, name).cache_clear()


def fa_version(major, minor=0, *, built=(2, 3, 4), flash_attn_version=None, env=None, **kwargs):
    """A call of get_flash_attn_version(**kwargs) under on_gpu(...), for expect_logged/not_logged."""
    def run():
        with on_gpu(major, minor, built=built, flash_attn_version=flash_attn_version, env=env) as fa:
            return fa.get_flash_attn_version(**kwargs)
    return run


def returned(ctx, got, want):
    if got != want:
        ctx.observed = dict(ctx.observed or {}, returned=got)
        raise Refuted(f"get_flash_attn_version returned {got}, not {want}")
    ctx.note(f"get_flash_attn_version returned {got}")


FI_UTILS = "vllm.utils.flashinfer"


def forget_flashinfer_probes(fi=None):
    """vllm.utils.flashinfer caches its probes (cubin package, artifactory, TRT-LLM support) for
    the process; they depend on the platform and environment a step sets, so each step probes anew."""
    import sys

    fi = fi or sys.modules.get(FI_UTILS)
    if fi is not None:
        for name in ("has_flashinfer_cubin", "has_flashinfer", "has_nvidia_artifactory",
                     "supports_trtllm_attention"):
            getattr(fi, name).cache_clear()


@contextmanager
def flashinfer_utils(major=None, minor=0, *, env=None, **module_attrs):
    """vllm.utils.flashinfer with a fresh process state: its cached probes (cubin package,
    artifactory, TRT-LLM support) forgotten, `env` set, the platform as on a GPU of capability
    major.minor when given, and module attributes set as the environment would have set them at
    import (FLASHINFER_CUBINS_REPOSITORY is read from the environment when the module loads)."""
    import importlib

    pin_platform()
    fi = importlib.import_module(FI_UTILS)
    patches = [mock.patch.dict(os.environ, env or {})]
    if major is not None:
        patches.append(mock.patch.object(fi, "current_platform", cuda_platform(major, minor)))
    patches += [mock.patch.object(fi, name, value) for name, value in module_attrs.items()]

    def forget():
        forget_flashinfer_probes(fi)
        forget_once_logs()

    for p in patches:
        p.start()
    try:
        forget()
        yield fi
    finally:
        for p in reversed(patches):
            p.stop()
        forget()
