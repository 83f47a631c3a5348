"""Poetry builds flash-attn's sdist in an isolated environment without torch, and reports the
backend's death in get_requires_for_build_wheel through PyPA build's message.

Reproduce: Poetry 1.8.3 (pip-installed in its own environment) installs a project whose only
dependency is flash-attn 2.8.3 (no wheel on PyPI, so Poetry builds the sdist): its ChefBuildError
carries 'Backend subprocess exited when trying to invoke get_requires_for_build_wheel' and, below,
setup.py's "No module named 'torch'". Fix 1 needs flash-attn's GitHub release wheels, which this
machine cannot reach. Fix 2, torch first and pip without build isolation in the same environment,
is the shared step: setup.py imports torch and the install gets past the hook that failed."""

import tempfile
from pathlib import Path

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
POETRY = "1.8.3"
PROJECT = """[tool.poetry]
name = "errkb-poetry-case"
version = "0.1.0"
description = ""
authors = ["errkb"]
package-mode = false

[tool.poetry.dependencies]
python = ">=3.9"
flash-attn = "2.8.3"
"""


def _poetry_install(ctx) -> _venv.Run:
    tool = _venv.venv(ctx, f"poetry-{POETRY}", install=[f"poetry=={POETRY}"])
    project = Path(tempfile.mkdtemp(prefix="errkb-poetry-", dir=_venv._tmp_root()))
    (project / "pyproject.toml").write_text(PROJECT)
    res = _venv.run([tool.bin("poetry"), "install", "--no-root", "--no-interaction"], cwd=project, timeout=900,
                    env=_venv.tool_env(POETRY_VIRTUALENVS_IN_PROJECT="true", POETRY_CACHE_DIR=str(project / "cache")))
    ctx.note(f"poetry {POETRY} install: " + res.summary())
    return res


def reproduce(ctx):
    res = _poetry_install(ctx)
    ctx.note("the backend's own error below: " + _venv.last_exception(res.output, 200))
    ctx.expect_error(_venv.raise_tool_message, "ChefBuildError", res.output, ctx.record["template"])


def fix_1(ctx):
    ctx.skip("needs flash-attn's GitHub release wheels: only PyPI is reachable from this machine")


fix_2 = b.flash_attn_without_isolation
