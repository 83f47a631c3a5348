"""`from transformers.utils import is_flash_attn_available` on transformers 4.39 and later:
"cannot import name 'is_flash_attn_available' from 'transformers.utils' (...)".

Imports only, each in a child process of an environment made by uv 0.9.0 with one transformers release
and PyPI's torch (CUDA builds, which import on this GPU-less machine): torch 2.5.1 next to the 4.34-4.39
releases, torch 2.14.1 next to the current release (5.25.0 disables PyTorch below 2.6). Nothing is
stood in or patched; flash-attn is not installed, so every availability check answers False. The
child taps the "transformers" logger so that what it logs (the deprecation line) is read exactly.

Reproduce: the record's import raises the message on 4.39.0, 4.39.3 and 5.25.0 (import_utils is noted
too). Fix 1: the aliased import of is_flash_attn_2_available works and its call answers on 4.39.0 and
5.25.0; the note adds that 4.34.0 has no is_flash_attn_2_available (the fix says "from 4.35 on").
Fix 2: the fix's own requirement, `transformers>=4.35,<4.39`, resolved by uv (4.38.2), and 4.35.2 and
4.34.0: the old import works and its call answers; on 4.35.2 and 4.38.2 the call logs the deprecation
line the record quotes, on 4.34.0 nothing."""

import re

from verification.cases import _builds as b
from verification.cases import _tiny_llama as llama
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
OLD_TORCH = "torch==2.5.1"
NEW_TORCH = "torch==2.14.1"
REMOVED = ["transformers==4.39.0", "transformers==4.39.3", "transformers==5.25.0"]
PIN = "transformers>=4.35,<4.39"  # fix 2's requirement, as written
OLDER = ["transformers==4.35.2", "transformers==4.34.0"]
DEPRECATED = "Using `is_flash_attn_available` is deprecated and will be removed in v4.38"
HEAD = llama.LOG_TAP + "import torch, transformers\nprint('VERSIONS', transformers.__version__, torch.__version__, flush=True)\n"
OLD_IMPORT = HEAD + "from transformers.utils import is_flash_attn_available\nprint('ANSWER', is_flash_attn_available())\n"
DEEP_IMPORT = HEAD + "from transformers.utils.import_utils import is_flash_attn_available\n"
ALIAS = HEAD + ("from transformers.utils import is_flash_attn_2_available as is_flash_attn_available\n"
                "print('ANSWER', is_flash_attn_available())\n")
HAS_NEW = HEAD + "import transformers.utils as u\nprint('HAS', hasattr(u, 'is_flash_attn_2_available'))\n"


def _env(ctx, requirement: str) -> _venv.Venv:
    torch = NEW_TORCH if requirement.startswith("transformers==5") else OLD_TORCH
    key = "tf-" + re.sub(r"[^\w.]+", "-", requirement)
    tool, env = b.uv_env(ctx, key, torch, requirement)
    return env


def _run(ctx, requirement: str, code: str) -> _venv.Run:
    res = _env(ctx, requirement).python_run(code, HF_HUB_OFFLINE="1")
    versions = next((l.split()[1:] for l in res.output.splitlines() if l.startswith("VERSIONS ")), None)
    if versions is None:
        raise RuntimeError(f"{requirement}: transformers did not import here: {llama.outcome(res)}")
    causes = _venv.exception_lines(res.output)
    ctx.note(f"{requirement} (transformers {versions[0]}, torch {versions[1]}): "
             + (f"{causes[-1][0]}: {causes[-1][1][:300]}" if causes else f"exit {res.returncode}, no exception"))
    return res


def _answers(ctx, requirement: str, res: _venv.Run, deprecated: bool) -> None:
    """The child got past the import and printed the check's answer; the deprecation line was logged
    exactly when `deprecated`."""
    _venv.reraise(res.output)
    answer = next((l for l in res.output.splitlines() if l.startswith("ANSWER ")), None)
    if answer is None:
        raise AssertionError(f"{requirement}: no answer printed: {res.tail(400)}")
    lines = [m for m in llama.logged(res.output) if "is_flash_attn_available" in m]
    ctx.note(f"{requirement}: {answer}; logged: {lines[0] if lines else 'nothing about the name'}")
    if deprecated != any(DEPRECATED in m for m in lines):
        raise AssertionError(f"{requirement}: deprecation line expected={deprecated}, logged: {lines}")


def reproduce(ctx):
    runs = {rel: _run(ctx, rel, OLD_IMPORT) for rel in REMOVED}
    ctx.note("and from transformers.utils.import_utils:")
    _run(ctx, REMOVED[0], DEEP_IMPORT)
    llama.each_release(ctx, runs)
    ctx.expect_error(_venv.reraise, runs[REMOVED[0]].output, ctx.record["template"])


def fix_1(ctx):
    runs = {rel: _run(ctx, rel, ALIAS) for rel in (REMOVED[0], REMOVED[-1])}
    before = _run(ctx, OLDER[-1], HAS_NEW)

    def alias_works():
        for rel, res in runs.items():
            _answers(ctx, rel, res, deprecated=False)
        if "HAS False" not in before.output:
            raise AssertionError(f"{OLDER[-1]} has is_flash_attn_2_available, against the fix's 'from 4.35 on'")
        ctx.note(f"{OLDER[-1]} has no is_flash_attn_2_available (the alias needs 4.35 or later)")

    ctx.call(alias_works)


def fix_2(ctx):
    runs = {rel: _run(ctx, rel, OLD_IMPORT) for rel in (PIN, *OLDER)}

    def old_name_works():
        for rel, res in runs.items():
            _answers(ctx, rel, res, deprecated=rel != OLDER[-1])
        pinned = next(l.split()[1] for l in runs[PIN].output.splitlines() if l.startswith("VERSIONS "))
        ctx.note(f"uv resolved {PIN!r} to transformers {pinned}")

    ctx.call(old_name_works)
