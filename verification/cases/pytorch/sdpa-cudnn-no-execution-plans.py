"""cuDNN attention finds no execution plan ("No execution plans support the graph").

The steps are shared with sdpa-cudnn-no-valid-execution-plans-built (_cudnn_sdpa.py says how the
reproduce step picks its inputs, since the record names no single one). Fixes 1, 2 and 5 are
checked; fix 3 (another torch release) and fix 4 (another cuDNN / libnvrtc) need another
environment and have no step."""

from verification.cases.pytorch import _cudnn_sdpa as c

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "arch": "sm90+", "packages": ["torch"]}
TIMEOUT = 600


def reproduce(ctx):
    c.reproduce(ctx)


def fix_1(ctx):
    c.disable_cudnn(ctx)


def fix_2(ctx):
    c.other_backends(ctx)


def fix_5(ctx):
    c.deprioritize_env(ctx)


def control(ctx):
    c.control(ctx)
