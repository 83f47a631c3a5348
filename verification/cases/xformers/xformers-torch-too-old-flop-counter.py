"""`import xformers.ops` with xformers 0.0.29.post2+ on torch 2.3 or older: "cannot import name
'_unpack_flash_attention_nested_shapes' from 'torch.utils.flop_counter'" (0.0.30-0.0.35; 0.0.29.post2
and .post3 name '_flash_attention_backward_flop' first).

No GPU needed: the real xformers 0.0.29.post2 wheel installed with --no-deps next to torch 2.3.1,
imported in the worker. With 0.0.30 on that torch the step is skipped: flash.py stops the import
first (the record says so since this case refuted its first wording). Fix 1 (the xformers wheel built for the torch in use) runs where the wheel's metadata
pins the installed torch (0.0.28.post3 with 2.5.1, 0.0.24 with 2.2.0): the import must succeed in a
fresh interpreter.
Fix 2 (no xformers; PyTorch's SDPA) must run on the CPU and match the reference."""

import importlib
import sys

from verification.cases._common import TOL, ref_attention
from verification.cases.xformers._xf import child, matched_pair

BACKEND = "xformers"
REQUIRES = {"packages": ["torch"]}
TIMEOUT = 180


def _import_ops():
    for name in [m for m in sys.modules if m == "xformers" or m.startswith("xformers.")]:
        del sys.modules[name]
    return importlib.import_module("xformers.ops")


def _child_import(ctx):
    """A fresh interpreter imports xformers.ops, as the fix's check command does (in the worker, a second
    import after other steps would register xformers' operators twice: a harness artifact)."""
    from errkb.verify.case import Refuted
    from errkb.verify.case import match_message

    out = child(["-c", "import xformers.ops"])
    hit = match_message(ctx.record["template"], out.stderr)
    if out.returncode != 0 or hit:
        ctx.observed = {"class": "python -c 'import xformers.ops'", "message": out.stderr[-3000:], "match": hit}
        raise Refuted(f"the import exited with {out.returncode}")


def _source(name: str) -> str:
    """The text of xformers/ops/fmha/<name>.py of the installed wheel, read without importing it."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("xformers")
    path = Path(list(spec.submodule_search_locations)[0]) / "ops" / "fmha" / f"{name}.py"
    return path.read_text() if path.is_file() else ""


def reproduce(ctx):
    import torch

    if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 4):
        ctx.skip(f"torch {torch.__version__} has both names (from 2.4.1)")
    if "torch.utils.flop_counter" not in _source("flash3"):
        ctx.skip("this xformers' flash3.py imports nothing from torch.utils.flop_counter (0.0.29.post2 and later do)")
    if "is_flash_attention_available()" in _source("flash") and not hasattr(torch.backends.cuda, "is_flash_attention_available"):
        ctx.skip("this xformers' flash.py (imported first) calls torch.backends.cuda.is_flash_attention_available(), "
                 f"which torch {torch.__version__} lacks: the import stops there with an AttributeError (the record's note)")
    ctx.expect_error(_import_ops)


def fix_1(ctx):
    pin = matched_pair(ctx)
    _child_import(ctx)
    ctx.note(f"import xformers.ops: fine with the torch {pin} this wheel pins")


def fix_2(ctx):
    t = ctx.torch
    q, k, v = (t.randn(1, 2, 16, 64) for _ in range(3))
    out = ctx.call(t.nn.functional.scaled_dot_product_attention, q, k, v)
    ctx.close(out, ref_attention(q, k, v, layout="bhsd"), **TOL)
