"""No module named 'flash_attn_cuda': FlashAttention 1's compiled extension, asked for by name.

The flash-attn tree on the path decides the situation (the record's triggers 2 and 3): flash-attn
2.x's Python files (the 2.8.3 sdist, the same files as git tag v2.8.3), whose own compiled
flash_attn_2_cuda is stood in so that the package imports as an installed 2.x build does, and then
flash_attn.flash_blocksparse_attn_interface is imported; or git tag v1.0.9's flash_attn/ with no
extension built, and flash_attn.flash_attn_interface is imported. flash_attn_cuda itself is never
stood in: its absence is what the record is about.

Reproduce: that import raises the record's error; the step also notes what importing
flash_attn.flash_blocksparse_attention (the module users import) raises, which depends on whether
hydra is importable (that file imports hydra before the interface). Fix 1: the fix's Python line
prints the version and the file of the flash_attn imported, and the traceback's last frame is the
file the record says tells the situation apart. Fix 2 (2.x): flash_attn_varlen_func imports and the
fix's call binds to its signature (running it needs a GPU). Fix 3 builds 1.0.9 from source (not
run). Fix 4 (2.x): flash_attn_func imports."""

import importlib
import inspect
import sys
import traceback
from importlib import import_module

fa = import_module("verification.cases.flash-attn._fa_py")

BACKEND = "fa2"
REQUIRES = {"packages": ["torch"]}
TIMEOUT = 180


def _tree(ctx):
    """(version, module the record says imports flash_attn_cuda, file name of that module)."""
    version = fa.tree_version()
    if version is None:
        ctx.skip("needs a flash-attn tree on the path (flash_attn/__init__.py with __version__)")
    ctx.note(f"flash-attn {version} (Python files on the path)")
    if fa.major(version) >= 2:
        fa.interface(ctx)  # flash_attn_2_cuda stood in when it does not load
        return version, "flash_attn.flash_blocksparse_attn_interface", "flash_blocksparse_attn_interface.py"
    return version, "flash_attn.flash_attn_interface", "flash_attn_interface.py"


def _fresh_import(name):
    def run():
        sys.modules.pop(name, None)
        return importlib.import_module(name)

    return run


def reproduce(ctx):
    if importlib.util.find_spec("flash_attn_cuda") is not None:
        ctx.skip("a module named flash_attn_cuda is importable here")
    version, module, _ = _tree(ctx)
    ctx.note(f"import {module}")
    ctx.expect_error(_fresh_import(module))
    if fa.major(version) >= 2:
        try:
            _fresh_import("flash_attn.flash_blocksparse_attention")()
            ctx.note("flash_attn.flash_blocksparse_attention imported (unexpected)")
        except ImportError as err:
            hydra = importlib.util.find_spec("hydra") is not None
            ctx.note(f"import flash_attn.flash_blocksparse_attention ({'hydra importable' if hydra else 'no hydra'}): "
                     f"{type(err).__name__}: {err}")


def fix_1(ctx):
    version, module, filename = _tree(ctx)

    def diagnose():
        import flash_attn

        return flash_attn.__version__, flash_attn.__file__

    got = ctx.call(diagnose)
    ctx.note(f"fix 1 prints: {got[0]} {got[1]}")
    try:
        _fresh_import(module)()
    except ModuleNotFoundError as err:
        last = traceback.extract_tb(err.__traceback__)
        frames = [f for f in last if f.filename.endswith(".py") and "importlib" not in f.filename]
        where = frames[-1]
        ctx.note(f"last frame: {where.filename}:{where.lineno}: {where.line}")
        if not where.filename.endswith(filename) or "flash_attn_cuda" not in (where.line or ""):
            raise AssertionError(f"the last frame is {where.filename}:{where.lineno}, not {filename}'s import")
        return
    raise AssertionError(f"{module} imported")


def fix_2(ctx):
    fa.needs(ctx, low="2.0.0", why="the fix is the 2.x API")
    fa.interface(ctx)

    def new_api():
        from flash_attn import flash_attn_varlen_func

        return flash_attn_varlen_func

    fn = ctx.call(new_api)
    t = ctx.torch
    q = k = v = t.zeros(8, 2, 64, dtype=t.float16)
    cu = t.tensor([0, 3, 8], dtype=t.int32)
    inspect.signature(fn).bind(q, k, v, cu, cu, 5, 5, dropout_p=0.0, softmax_scale=0.125, causal=True)
    ctx.note("flash_attn_varlen_func imports and the fix's call binds to its signature (not run: needs a GPU)")


def fix_3(ctx):
    ctx.skip("builds flash-attn 1.0.9 from source with nvcc (hours on this machine, no GPU to use it)")


def fix_4(ctx):
    fa.needs(ctx, low="2.0.0", why="the fix is for 2.x")
    fa.interface(ctx)

    def dense():
        from flash_attn import flash_attn_func

        return flash_attn_func

    ctx.call(dense)
