"""ImportError "cannot import name '{name}' from '{module}'": the general shape, checked with one
real case, transformers' modeling_flash_attention_utils and is_flash_attn_greater_or_equal_2_10
(the record's example message), on the transformers release the run names (ERRKB_VERIFY_LIBS).

Reproduce: the from-import on a release without the name there (4.43-4.50.x, 5.4.0+; see
transformers-is-flash-attn-greater-or-equal-2-10-import-error), and the path Python prints in
parentheses is the file of the module that was imported (the record's meaning). Fix 1: its Python
line, with the distribution of the error (transformers, as its caveat says), prints the version
and the same file. Fix 2: on a release that has the name (4.51.0-5.3.x) the same import works.
Fix 3 (a source checkout shadowing the package) is not reproduced here."""

import importlib
import re

from verification.cases.transformers._tf import needs, version

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}
TIMEOUT = 300


def _has_name() -> bool:
    return (4, 51) <= version() < (5, 4)


def _import():
    from transformers.modeling_flash_attention_utils import is_flash_attn_greater_or_equal_2_10

    return is_flash_attn_greater_or_equal_2_10


def reproduce(ctx):
    needs(ctx, low="4.43.0", why="modeling_flash_attention_utils appeared in 4.43.0")
    if _has_name():
        ctx.skip("this release has the name there (fix 2's release)")
    err = ctx.expect_error(_import)
    module = importlib.import_module("transformers.modeling_flash_attention_utils")
    shown = re.search(r"\(([^()]*)\)\s*$", str(err))
    if not shown or shown.group(1) != module.__file__:
        raise AssertionError(f"the path in parentheses is not the imported module's file {module.__file__}: {err}")
    ctx.note(f"the path in parentheses is the imported file: {shown.group(1)}")


def fix_1(ctx):
    def diagnose():
        import importlib.metadata as m

        import transformers.modeling_flash_attention_utils as mod

        return m.version("transformers"), mod.__file__

    got, where = ctx.call(diagnose)
    ctx.note(f"transformers {got} at {where}")


def fix_2(ctx):
    needs(ctx, low="4.43.0", why="modeling_flash_attention_utils appeared in 4.43.0")
    if not _has_name():
        ctx.skip("this release lacks the name: the fix is to install one that has it (4.51.0-5.3.x), run there")
    ctx.call(_import)


def fix_3(ctx):
    ctx.skip("a source checkout whose copy lacks the name is not set up here; "
             "flash-attn-2-cuda-module-not-found's case shows a checkout shadowing the package")
