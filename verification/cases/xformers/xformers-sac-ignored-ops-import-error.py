"""`import xformers` with xformers 0.0.27+ on torch older than 2.2: "cannot import name
'SAC_IGNORED_OPS' from 'torch.utils.checkpoint'", then, while handling it, the same for
'_ignored_ops' (the fallback), which is what stops the import.

No GPU needed: the real xformers 0.0.28.post3 wheel installed with --no-deps next to torch 2.1.2
(the situation the record describes), imported in the worker. Fix 1 (the xformers wheel built for
the torch in use) and fix 2 (torch upgraded with xformers) are the same check in an environment
whose xformers pins the installed torch in its wheel metadata (0.0.28.post3 with 2.5.1, 0.0.24
with 2.2.0): `import xformers, xformers.ops` must succeed in a fresh interpreter."""

import importlib
import sys

from verification.cases.xformers._xf import child, matched_pair

BACKEND = "xformers"
REQUIRES = {"packages": ["torch"]}
TIMEOUT = 180


def _import_xformers():
    for name in [m for m in sys.modules if m == "xformers" or m.startswith("xformers.")]:
        del sys.modules[name]  # a failed import may leave parts behind; users import once
    importlib.import_module("xformers")
    return importlib.import_module("xformers.ops")


def _child_import(ctx):
    """A fresh interpreter imports xformers, xformers.ops, as the fix's check command does (in the worker, a second
    import after other steps would register xformers' operators twice: a harness artifact)."""
    from errkb.verify.case import Refuted
    from errkb.verify.case import match_message

    out = child(["-c", "import xformers, xformers.ops"])
    hit = match_message(ctx.record["template"], out.stderr)
    if out.returncode != 0 or hit:
        ctx.observed = {"class": "python -c 'import xformers, xformers.ops'", "message": out.stderr[-3000:], "match": hit}
        raise Refuted(f"the import exited with {out.returncode}")


def reproduce(ctx):
    import torch

    if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 2):
        ctx.skip(f"torch {torch.__version__} has the fallback name (_ignored_ops from 2.2), so the import goes through")
    ctx.expect_error(_import_xformers)


def fix_1(ctx):
    pin = matched_pair(ctx)
    _child_import(ctx)
    ctx.note(f"import xformers, xformers.ops: fine with the torch {pin} this wheel pins")


def fix_2(ctx):
    import torch

    if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) < (2, 5):
        ctx.skip(f"the fix upgrades torch (to 2.5+, which has SAC_IGNORED_OPS); this is {torch.__version__}")
    pin = matched_pair(ctx)
    _child_import(ctx)
    ctx.note(f"import xformers, xformers.ops: fine with torch {pin}")
