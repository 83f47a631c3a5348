"""The real `pre-commit` runs errkb's hook (.pre-commit-hooks.yaml) on a temporary git repository.

The hook repository is a snapshot of this working tree committed into a temporary git repo, so
the test sees exactly what would be published; pre-commit builds the hook's environment from it
(that needs PyPI for errkb's dependencies, nothing else)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BAD = ("from sglang.kernels.ops.attention.flash_attention_v4 import flash_attn_with_kvcache\n"
       "out = flash_attn_with_kvcache(q, kc, vc, rotary_cos=cos, rotary_sin=sin)\n")


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def snapshot_of_this_tree(dest: Path) -> str:
    files = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file() and not rel.startswith(("tests/", "bench/")):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "snapshot")
    return git(dest, "rev-parse", "HEAD")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")
def test_pre_commit_runs_the_hook(tmp_path):
    hook_repo, project = tmp_path / "hook", tmp_path / "project"
    hook_repo.mkdir()
    project.mkdir()
    rev = snapshot_of_this_tree(hook_repo)
    git(project, "init", "-q")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hook_repo}\n  rev: {rev}\n  hooks:\n  - id: errkb-lint\n"
        "    args: [--no-cache]\n")
    (project / "model.py").write_text(BAD)
    (project / "clean.py").write_text("print('fine')\n")
    git(project, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    run = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=project,
                         env=env, capture_output=True, text=True, timeout=900)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "errkb lint" in out and "Failed" in out
    assert "model.py:2:" in out and "EKB102" in out
    assert "FA4 path does not support rotary embedding." in out

    (project / "model.py").write_text(BAD.replace("rotary_cos=cos, rotary_sin=sin", "cache_seqlens=lens"))
    git(project, "add", "-A")
    run = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=project,
                         env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Passed" in run.stdout
