"""`import xformers.ops` on xFormers 0.0.35.dev1147 with only PyPI's empty mslk 0.0.0: the warning
"WARNING[XFORMERS]: the 'mslk' package is not installed, so the attention ops are unavailable."

Real PyPI wheels in a uv environment with torch 2.14.1 (verification/cases/xformers/_mslk.py); the
child's `xformers` log line is logged again here word for word. Fix 1 needs PyTorch's wheel index
(out of reach): skipped. Fix 2 installs xformers 0.0.35: the import must not log the warning and
memory_efficient_attention must exist."""

from verification.cases import _venv
from verification.cases.xformers import _mslk as m

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def reproduce(ctx):
    res = m.run(m.env(ctx, "xf-dev1147-mslk-placeholder", m.DEV_WARNS, m.PLACEHOLDER), m.LOOKUP)
    ctx.note(f"0.0.35.dev1147 with mslk 0.0.0: {res.summary()}; then {_venv.last_exception(res.output, 200)}")
    ctx.expect_logged(m.LOGGER, m.relog, res.output)


def fix_1(ctx):
    ctx.skip("installs mslk from download.pytorch.org, which this machine cannot reach")


def fix_2(ctx):
    res = m.run(m.env(ctx, "xf-0.0.35-release", m.RELEASE), m.LOOKUP)
    ctx.not_logged(m.LOGGER, m.relog, res.output)
    ctx.call(_venv.finished, res, "found memory_efficient_attention", "the lookup on xformers 0.0.35")
    ctx.note("xformers 0.0.35: no mslk warning, xformers.ops.memory_efficient_attention exists")
