"""sgl_kernel/flash_attn.py turns any failure to import its compiled FA3 module (flash_ops) into one generic ImportError."""

import importlib

from errkb.verify.case import Refuted, attempt, match_message
from verification.cases.sglang._sglk import WHEELS, kernel_package

# Runs in call 3's SGLang process (the kernel wheels' Python files travel with SGLang's tree).
BACKEND = "sglang-server"
REQUIRES = {"packages": ["torch"]}
# Fix 2 (the kernel wheel that matches torch) needs that wheel installed for real, beside the torch
# it pins: sglang-kernel 0.4.10 pins torch 2.14.1. This machine has torch 2.11.
STEP_REQUIRES = {"fix_2": {"torch": "==2.14.1", "cuda": True, "arch": "sm80-sm90"}}


def reproduce(ctx):
    # Both wheels, as installed minus the compiled flash_ops (here it is absent; a torch mismatch,
    # an old driver or a missing library make it fail to load the same way: the module's bare
    # except catches all of them).
    for wheel in WHEELS:
        with kernel_package(ctx, wheel):
            ctx.expect_error(importlib.import_module, "sgl_kernel.flash_attn")


def fix_1(ctx):
    # "Import the extension directly": the same install then names the real cause instead.
    for wheel in WHEELS:
        with kernel_package(ctx, wheel):
            _, raised = attempt(importlib.import_module, "sgl_kernel.flash_ops")
        if raised is None:
            raise Refuted(f"{wheel}: flash_ops imported, so the wrapper's error had another cause")
        text = f"{type(raised).__name__}: {raised}"
        if match_message(ctx.record["template"], str(raised)) or "flash_ops" not in str(raised):
            ctx.observed = {"class": type(raised).__name__, "message": str(raised)[:2000]}
            raise Refuted(f"{wheel}: the direct import does not name the real cause ({text})")
        ctx.note(f"{wheel}: the direct import says {text}")


def fix_2(ctx):
    # With the matching sglang-kernel installed (its real package, not the Python files), the
    # wrapper imports.
    import sys

    from errkb.verify.standin import is_standin

    if is_standin(sys.modules.get("sgl_kernel")):
        ctx.skip("sgl_kernel does not load in this process (the SGLang cases stood in for it)")
    _, raised = attempt(importlib.import_module, "sgl_kernel")
    if raised is not None:
        ctx.skip(f"needs sglang-kernel installed ({type(raised).__name__}: {str(raised)[:200]})")
    ctx.call(importlib.import_module, "sgl_kernel.flash_attn")
