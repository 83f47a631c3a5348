"""An extension built for another torch: importing it fails with 'undefined symbol: _ZN3c10...'.

The extension is xformers 0.0.28.post3's real `_C.so` (built for torch 2.5.1), imported next to
the device's torch 2.11 in a child process (verification/cases/_xformers_wheels.py); the child's
ImportError line is passed on word for word. No fix step: the fixes need either the extension
built for torch 2.11 (PyPI has none for xformers: 0.0.35, the newest, is built for torch
2.10.0+cu128 and cannot load its extension next to 2.11 either, as the H200 run of 2026-12-02
showed) or torch 2.5.1, which the GPU machine cannot install."""

from verification.cases import _xformers_wheels as xf

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm80+", "packages": ["torch"]}
TIMEOUT = 600


def reproduce(ctx):
    def import_old_extension():
        child = xf.run_child(ctx, "old", "import torch\nimport xformers._C\n")
        message = xf.last_error_line(child.stderr, "ImportError: ")
        if message is None:
            ctx.note("child: " + xf.describe(child))
            return None  # imported (or failed otherwise): expect_error reports it
        raise ImportError(message)

    ctx.expect_error(import_old_extension)

