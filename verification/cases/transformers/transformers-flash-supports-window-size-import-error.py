"""'cannot import name '_flash_supports_window_size' from 'transformers.modeling_flash_attention_utils''.

The name is a private flag: 4.43.0-4.52.x define it only when flash-attn imports, 4.53.x define it
(False) always, 4.54.0 removed it. Imports only, on a CPU without flash-attn: the error on 4.44.2
(flash-attn missing) and on 4.54.0 and later (name gone); on 4.53.x the import works, which is
fix 1 (pin >=4.43,<4.54: on a machine without flash-attn only 4.53.x gives the name, as its
caveat says). Fix 2 (the try/except in the model code) runs on every release."""

from verification.cases.transformers._tf import flash_attn_installed, needs, version

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}
TIMEOUT = 300


def _import():
    from transformers.modeling_flash_attention_utils import _flash_supports_window_size

    return _flash_supports_window_size


def reproduce(ctx):
    needs(ctx, low="4.43.0", why="the module appeared in 4.43.0")
    if (4, 53) <= version() < (4, 54):
        ctx.skip("4.53.x defines the name whether or not flash-attn imports (fix 1's release)")
    if version() < (4, 53) and flash_attn_installed():
        ctx.skip("before 4.53 the name is missing only without flash-attn, and flash-attn is installed here")
    ctx.expect_error(_import)


def fix_1(ctx):
    needs(ctx, low="4.43.0", below="4.54.0", why="the fix pins >=4.43,<4.54")
    if version() < (4, 53) and not flash_attn_installed():
        ctx.skip("before 4.53 the name needs a working flash-attn (the fix's caveat); not installed here")
    ctx.note(f"_flash_supports_window_size = {ctx.call(_import)!r}")


def fix_2(ctx):
    def model_code():
        try:
            from transformers.modeling_flash_attention_utils import _flash_supports_window_size
        except ImportError:
            _flash_supports_window_size = False
        return _flash_supports_window_size

    ctx.note(f"_flash_supports_window_size = {ctx.call(model_code)!r}")
