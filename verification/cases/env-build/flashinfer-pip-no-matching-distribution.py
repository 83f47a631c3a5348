"""pip finds nothing for FlashInfer: 'No matching distribution found for flashinfer...'.

Reproduce (two of the record's conditions, pip 26.3 against PyPI, --dry-run): `pip install flashinfer`
(the old name, which PyPI does not have) on CPython 3.11, and `pip install flashinfer-python==0.7.4` on
CPython 3.9 with pip 25.3, the last pip for 3.9 (0.7.4 requires Python >= 3.10). Unpinned, pip on 3.9 does
not print the message: it takes flashinfer_python-0.5.2-py3-none-any.whl, the newest release that admits
3.9, and fails later on a dependency's build (the record says so since this run). Fix 1: `pip install flashinfer-python` on 3.11
resolves (--dry-run: torch and the CUDA wheels it pulls are not installed). Fix 2 needs
flashinfer.ai's index, not reachable here. Fix 3 as written, on 3.9: `pip download --no-deps -v`
prints why each file was skipped (the Requires-Python lines)."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
PINNED = "flashinfer-python==0.7.4"  # Requires-Python >= 3.10; unpinned, pip on 3.9 takes 0.5.2's wheel instead


def reproduce(ctx):
    env = _venv.venv(ctx, "fresh-" + b.PIP, pip=b.PIP)
    old = env.pip("install", "--dry-run", "flashinfer", timeout=300)
    ctx.note("Python 3.11, " + old.summary())
    ctx.expect_error(_venv.raise_tool_message, "pip", old.output, ctx.record["template"])
    py39 = _venv.venv(ctx, "fresh-" + b.PIP_PY39 + "-py3.9", python="3.9", pip=b.PIP_PY39)
    res = py39.pip("install", "--dry-run", PINNED, timeout=300)
    ctx.note("Python 3.9, " + res.summary())
    ctx.expect_error(_venv.raise_tool_message, "pip", res.output, ctx.record["template"])


def fix_1(ctx):
    env = _venv.venv(ctx, "fresh-" + b.PIP, pip=b.PIP)
    res = env.pip("install", "--dry-run", "flashinfer-python", timeout=600)

    def resolves():
        _venv.raise_tool_message("pip", res.output, ctx.record["template"])
        would = [l for l in res.output.splitlines() if l.startswith("Would install")]
        if res.returncode != 0 or not would:
            raise AssertionError(res.tail(600))
        ctx.note(re.sub(r"(flashinfer[-_]python-\S+).*", r"\1 ...", would[0][would[0].find("flashinfer"):])[:200])

    ctx.call(resolves)


def fix_2(ctx):
    ctx.skip("needs https://flashinfer.ai/whl/<cuda>: only PyPI is reachable from this machine")


def fix_3(ctx):
    py39 = _venv.venv(ctx, "fresh-" + b.PIP_PY39 + "-py3.9", python="3.9", pip=b.PIP_PY39)
    res = py39.pip("download", "--no-deps", "-v", "flashinfer-python", "-d", _venv._tmp_root() / "fi", timeout=300)

    def explains():
        lines = [l for l in res.output.splitlines() if re.search(r"requires-python|Requires-Python", l, re.I)]
        if not lines:
            raise AssertionError(f"no Requires-Python line in pip's output: {res.tail(600)}")
        ctx.note(f"{len(lines)} Requires-Python lines, e.g. {lines[-1].strip()[:200]}")

    ctx.call(explains)
