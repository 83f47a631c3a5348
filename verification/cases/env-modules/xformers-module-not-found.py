"""`import xformers` where no xformers is installed: 'No module named 'xformers''.

Reproduce: a new environment (CPython 3.11, pip 26.3, nothing else), `python -c "import xformers"`.
Fix 1: the pins the fix quotes are what the releases declare: pip 26.3 reads the metadata PyPI serves
for xformers 0.0.32.post2 and 0.0.28.post3 (`pip install --dry-run --no-deps --report -`, nothing is
installed) and finds `torch==2.8.0` and `torch==2.5.1`. Fix 2 replaces xformers by SDPA on a GPU
(xformers' memory_efficient_attention has no CPU kernels in these releases): not run here."""

import json

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 600
PINS = {"0.0.32.post2": "torch==2.8.0", "0.0.28.post3": "torch==2.5.1"}


def reproduce(ctx):
    b.fresh_import_refused(ctx, "import xformers")


def fix_1(ctx):
    env = _venv.venv(ctx, "fresh-" + b.PIP, pip=b.PIP)

    def pins():
        for release, pin in PINS.items():
            res = env.pip("install", "--dry-run", "--no-deps", "--quiet", "--report", "-", f"xformers=={release}", timeout=300)
            report = json.loads(res.output[res.output.index("{"):])
            requires = report["install"][0]["metadata"].get("requires_dist", [])
            torch = [r for r in requires if r.replace(" ", "").startswith("torch")]
            if pin not in [r.replace(" ", "") for r in torch]:
                raise AssertionError(f"xformers {release} declares {torch}, not {pin}")
            ctx.note(f"xformers {release} (PyPI metadata): requires {torch}")

    ctx.call(pins)


def fix_2(ctx):
    ctx.skip("compares SDPA with xformers' memory_efficient_attention on a GPU: the xformers releases pinned here have no CPU kernels")
