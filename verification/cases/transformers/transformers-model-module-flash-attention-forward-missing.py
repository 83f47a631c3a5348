"""Patching code reads `_flash_attention_forward` from a model module that no longer imports it:
"module 'transformers.models.qwen2_5_vl.modeling_qwen2_5_vl' has no attribute '_flash_attention_forward'"
(Qwen2.5-VL from 4.53.0; Llama's module from 4.48.0).

Module attribute lookups and one attention call, on a CPU without flash-attn. Fix 3 is run as
written: the helper's name in transformers.integrations.flash_attention is replaced, then the
FlashAttention-2 function of transformers' attention interface (what the model's attention layers
call for attn_implementation="flash_attention_2") is called on small CPU tensors; the replacement
must be the function it reaches. (The record's first fix 3, patching only
transformers.modeling_flash_attention_utils, was refuted on 4.48.0-4.57.3: the step notes that it
still is.) Fixes 1 (ms-swift 3.7) and 2 (a release
whose model file imports the helper, which needs flash-attn installed) are not run here."""

from verification.cases.transformers._tf import needs, version

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}
TIMEOUT = 300


def _module_name():
    return "qwen2_5_vl" if version() >= (4, 53) else "llama"


def reproduce(ctx):
    needs(ctx, low="4.48.0", why="Llama's module imports the helper before 4.48.0")
    import importlib

    name = _module_name()
    mod = importlib.import_module(f"transformers.models.{name}.modeling_{name}")
    ctx.note(f"reading _flash_attention_forward from {mod.__name__}")
    ctx.expect_error(lambda: mod._flash_attention_forward)


def fix_1(ctx):
    ctx.skip("ms-swift (the framework whose patch fails) is not installed here")


def fix_2(ctx):
    ctx.skip("in 4.49-4.52 the model file imports the helper only when flash-attn is available; not installed here")


class _Layer:
    """What the attention function reads from the attention layer that calls it."""

    is_causal = True

    def __init__(self, torch):
        self.config = type("Cfg", (), {"_attn_implementation": "flash_attention_2"})()
        self.linear = torch.nn.Linear(8, 8)

    def modules(self):
        return iter([self.linear])


def _interface_fa2(ctx):
    needs(ctx, low="4.48.0", why="the attention interface routes FlashAttention-2 from 4.48.0")
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    return ALL_ATTENTION_FUNCTIONS["flash_attention_2"]


def _reaches(ctx, fa2) -> bool:
    t = ctx.torch
    q = t.randn(1, 2, 4, 8, dtype=t.float16)
    try:
        fa2(_Layer(t), q, q, q, None)
    except _Reached:
        return True
    except Exception as exc:  # noqa: BLE001 - the original helper, which needs flash-attn, ran instead
        ctx.observed = {"class": type(exc).__name__, "message": str(exc)[:2000]}
        return False
    return False


class _Reached(Exception):
    """Raised by the patched helper: the patch is what the attention function called."""


def _patched_reaches(ctx, module, fa2) -> bool:
    """Replace module._flash_attention_forward with a function that signals, call the interface's
    FlashAttention-2 function, restore; whether the replacement is what got called."""
    original = module._flash_attention_forward

    def my_forward(*args, **kwargs):
        raise _Reached()

    module._flash_attention_forward = my_forward
    try:
        return _reaches(ctx, fa2)
    finally:
        module._flash_attention_forward = original


def fix_3(ctx):
    fa2 = _interface_fa2(ctx)
    import transformers.integrations.flash_attention as fa_integration
    from transformers import modeling_flash_attention_utils as fa_utils

    # The 'before' of the fix: patching only the defining module (what the record used to advise).
    ctx.note(f"patched in modeling_flash_attention_utils only: reached = {_patched_reaches(ctx, fa_utils, fa2)}")
    ctx.observed = None
    if not _patched_reaches(ctx, fa_integration, fa2):
        from errkb.verify.case import Refuted

        raise Refuted("patched in transformers.integrations.flash_attention, the attention interface still calls the "
                      "original helper")
    ctx.note("the patch in transformers.integrations.flash_attention is what the attention interface called")
