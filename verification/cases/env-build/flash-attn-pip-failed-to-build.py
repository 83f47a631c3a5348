"""pip's summary line 'Failed to build <name>' after a failed wheel build, printed after the build's
own output (pip 26.3 with -v: the compiler error, ninja's and torch's exceptions, pip's box and
'ERROR: Failed building wheel for <name>') and before pip's closing error ('Failed to build installable
wheels ...' in pip 24.1 and later).

Shown with pip 26.3 building a one-file torch C++ extension that does not compile
(verification/cases/_torch_ext.py: torch 2.13.0+cpu, ninja 1.13.2, --no-build-isolation), so the line
names that project ('Failed to build errkb-broken-ext'), not flash-attn: flash-attn's compile needs a
CUDA torch and hours of nvcc. The older pips the record lists and flash-attn's setup.py lines were read,
not run. Fix 1: the fix's grep -m5 shows the compiler's error and the FAILED step among its lines,
ahead of pip's summary. Fix 2 needs flash-attn's GitHub release wheels."""

from errkb.verify.case import Refuted
from verification.cases import _torch_ext as t
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
ORDER = (t.COMPILER_ERROR, ("pip's wheel error", r"ERROR: Failed building wheel for "),
         ("summary", r"^Failed to build "), ("closing error", r"Failed to build installable wheels"))


def reproduce(ctx):
    lines = t.lines_in_order(ctx, t.build(ctx), "summary", ORDER)
    summary = t.line_no(lines, r"^Failed to build ")
    ctx.expect_error(_venv.raise_tool_message, "pip", lines[summary] if summary >= 0 else "", ctx.record["template"])


def fix_1(ctx):
    shown = t.grep(t.build(ctx), "-n", "-m5", "-E", "error|Error|FAILED|Killed")
    ctx.note("grep -n -m5: " + " | ".join(s[:140] for s in shown))
    if not any("FAILED:" in s for s in shown) or not any("error:" in s and "FAILED:" not in s for s in shown):
        ctx.observed = {"class": None, "message": None, "grep": shown}
        raise Refuted("the grep's five lines do not show the failed step and the compiler's error")


fix_2 = t.FLASH_ATTN_WHEEL
