"""'cannot import name 'is_flash_attn_greater_or_equal_2_10' from 'transformers.modeling_flash_attention_utils''.

Imports only, one transformers release per run (ERRKB_VERIFY_LIBS names it): the record says the
name is importable from modeling_flash_attention_utils in 4.51.0-5.3.0 only (not 4.43-4.50.x, not
5.4.0+), and from transformers.utils in 4.36.0-5.3.0 and again from 5.5.0 (a deprecated alias
with a FutureWarning), not in 5.4.x.

Reproduce: `import ring_flash_attn` (ring-flash-attn 0.1.8, its hf_adapter.py imports the name
from modeling_flash_attention_utils twice) where that package is on the path, else the bare
import statement; ring-flash-attn imports flash_attn, whose compiled flash_attn_2_cuda is stood in
when it does not load (flash-attn v2.8.3's Python files on the path). Fix 1: on 4.51.0-5.3.x
`import ring_flash_attn` works. Fix 2: the fallback code runs on every release and agrees with
is_flash_attn_greater_or_equal("2.1.0"). Control: the import from transformers.utils behaves per
release as the record says (works outside 5.4.x, raises the record's message on 5.4.x)."""

import importlib
import importlib.util
import sys

from verification.cases.transformers._tf import needs, version

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}
TIMEOUT = 300


def _has_name() -> bool:
    """The record's claim for modeling_flash_attention_utils at this release."""
    return (4, 51) <= version() < (5, 4)


def _direct():
    from transformers.modeling_flash_attention_utils import is_flash_attn_greater_or_equal_2_10

    return is_flash_attn_greater_or_equal_2_10


def _ring(ctx):
    """`import ring_flash_attn` as a function, or None when the package is not on the path."""
    if importlib.util.find_spec("ring_flash_attn") is None:
        return None
    from errkb.verify.standin import install, is_standin

    try:
        importlib.import_module("flash_attn_2_cuda")
    except ImportError:
        install("flash_attn_2_cuda")
    if is_standin(sys.modules.get("flash_attn_2_cuda")):
        ctx.note("flash_attn_2_cuda replaced by an errkb stand-in (flash-attn's Python files only; nothing calls it)")
    try:
        import importlib.metadata as md

        ctx.note(f"ring-flash-attn {md.version('ring-flash-attn')}")
    except Exception:
        ctx.note("ring-flash-attn (version not in metadata)")

    def run():
        for name in [m for m in sys.modules if m == "ring_flash_attn" or m.startswith("ring_flash_attn.")]:
            del sys.modules[name]
        return importlib.import_module("ring_flash_attn")

    return run


def reproduce(ctx):
    needs(ctx, low="4.43.0", why="modeling_flash_attention_utils appeared in 4.43.0")
    if _has_name():
        ctx.skip(f"the record says {'.'.join(map(str, version()))} has the name there (fix 1's range)")
    ring = _ring(ctx)
    ctx.note("import ring_flash_attn" if ring else "the bare import statement (ring-flash-attn not on the path)")
    ctx.expect_error(ring or _direct)


def fix_1(ctx):
    needs(ctx, low="4.51.0", below="5.4.0", why="the fix pins >=4.51,<5.4")
    ring = _ring(ctx)
    if ring is None:
        ctx.note("ring-flash-attn not on the path: the bare import statement")
    ctx.call(ring or _direct)


def fix_2(ctx):
    used = []

    def importing_code():
        try:
            from transformers.modeling_flash_attention_utils import is_flash_attn_greater_or_equal_2_10
            used.append("transformers' helper")
        except ImportError:
            from transformers.utils import is_flash_attn_greater_or_equal

            def is_flash_attn_greater_or_equal_2_10():
                return is_flash_attn_greater_or_equal("2.1.0")

            used.append("the fallback")
        return is_flash_attn_greater_or_equal_2_10()

    got = ctx.call(importing_code)
    if (used[0] == "the fallback") == _has_name():
        raise AssertionError(f"{used[0]} was used, against the record's release range")
    ctx.note(f"{used[0]} answered {got!r} (flash-attn {'on the path' if importlib.util.find_spec('flash_attn') else 'not installed'}, no GPU)")


def control(ctx):
    needs(ctx, low="4.36.0", why="the helper appeared in 4.36.0")

    def from_utils():
        import warnings

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from transformers.utils import is_flash_attn_greater_or_equal_2_10

            is_flash_attn_greater_or_equal_2_10()
        return [str(w.message) for w in caught if "is_flash_attn_greater_or_equal_2_10" in str(w.message)]

    if (5, 4) <= version() < (5, 5):
        ctx.note("5.4.x: the record says transformers.utils lacks it too")
        ctx.expect_error(from_utils)
        return
    deprecated = ctx.call(from_utils)
    ctx.note("transformers.utils has it" + (f"; deprecated: {deprecated[0][:160]}" if deprecated else ", no deprecation warning"))
    if (version() >= (5, 5)) != bool(deprecated):
        raise AssertionError(f"the record says the alias warns from 5.5.0 only; warnings here: {deprecated}")
