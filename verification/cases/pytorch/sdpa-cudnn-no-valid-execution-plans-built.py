"""cuDNN attention builds none of its candidate plans ("No valid execution plans built").

The steps are shared with sdpa-cudnn-no-execution-plans (_cudnn_sdpa.py says how the
reproduce step picks its inputs, since the record names no single one). Fixes 1, 2 and 3 are
checked; fix 4 (another cuDNN) needs another environment and has no step."""

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


def fix_3(ctx):
    c.deprioritize_env(ctx)


def control(ctx):
    c.control(ctx)
