"""With SGLANG_USE_SGL_FA3_KERNEL=0, SGLang logs a warning and falls back to sgl-kernel's FA3 when the kernels-hub FA3 cannot be loaded."""

import tempfile

from errkb.verify.case import Refuted

BACKEND = "sglang-server"
FA3 = "sglang.kernels.ops.attention.flash_attention_v3"
REQUIRES = {"packages": ["sglang.kernels.ops.attention.flash_attention_v3"]}


def _first_load():
    """The FA3 loader as on the first FA3 call of a process (it is memoised once it succeeds)."""
    from sglang.kernels.ops.attention import flash_attention_v3

    return flash_attention_v3._load_fa3_kernels.__wrapped__()


def _first_load_or_its_error():
    try:
        return _first_load()
    except Exception as exc:  # noqa: BLE001 - the fix step only asks whether the warning is logged
        return exc


def reproduce(ctx):
    from sglang.srt.environ import envs

    # An empty SGLANG_CACHE_DIR (no kernels.lock): the hub route needs the `kernels` package and
    # the Hugging Face hub, and this machine has neither. The fallback then imports sgl_kernel.
    with tempfile.TemporaryDirectory() as cache, envs.SGLANG_USE_SGL_FA3_KERNEL.override(False), \
            envs.SGLANG_CACHE_DIR.override(cache):
        text, _ = ctx.expect_logged(FA3, _first_load)
    if cache not in text:
        raise Refuted("the warning names another lockfile")


def fix_1(ctx):
    # The default (SGLANG_USE_SGL_FA3_KERNEL unset, i.e. 1) goes straight to sgl-kernel: no warning.
    from sglang.srt.environ import envs

    with envs.SGLANG_USE_SGL_FA3_KERNEL.override(True):
        raised = ctx.not_logged(FA3, _first_load_or_its_error)
    if isinstance(raised, Exception):
        ctx.note(f"sgl-kernel's FA3 itself is not importable here: {type(raised).__name__}: {raised}")
