"""Files of downstream projects that are not on PyPI (ComfyUI nodes, model repositories, research code),
exported at the commit a record cites from a local git clone, for the cases of records whose message
such a project prints.

Nothing of those projects is in this repository: a step reads them at run time from a clone under
ERRKB_VERIFY_GIT (default: `git` in ERRKB_VERIFY_CACHE), laid out as `<owner>+<name>/repo` (what the
search tool's `fetch` writes; a bare clone), `<owner>+<name>.git` or `<owner>+<name>`. A step whose
clone or commit is missing is skipped with the repository and commit it needs, never guessed.
The export is `git archive <commit> [paths]`, unpacked once per worker under the runner's temporary
root."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import tarfile
from pathlib import Path

from verification.cases import _venv


def git_root() -> Path:
    return Path(os.environ.get("ERRKB_VERIFY_GIT") or _venv.cache_dir() / "git")


def clone(ctx, repo: str) -> Path:
    """The git directory of `repo` ("owner/name"), or a skip naming it."""
    name = repo.replace("/", "+")
    for cand in (git_root() / name / "repo", git_root() / f"{name}.git", git_root() / name):
        if cand.is_dir() and subprocess.run(["git", "--git-dir", str(cand), "rev-parse", "--git-dir"],
                                            capture_output=True).returncode == 0:
            return cand
        if (cand / ".git").is_dir():
            return cand / ".git"
    ctx.skip(f"needs a git clone of {repo} under {git_root()} (ERRKB_VERIFY_GIT; layout <owner>+<name>/repo)")


def tree(ctx, repo: str, commit: str, paths=(), *, key: str | None = None) -> Path:
    """`paths` of `repo` at `commit` (the whole tree when empty), exported into a folder of their own;
    returns that folder (the repository's root)."""
    git = clone(ctx, repo)
    got = subprocess.run(["git", "--git-dir", str(git), "rev-parse", "--verify", "-q", f"{commit}^{{commit}}"],
                         capture_output=True, text=True)
    if got.returncode != 0:
        ctx.skip(f"the clone of {repo} at {git} has no commit {commit}")
    full = got.stdout.strip()
    part = hashlib.sha1("\0".join(paths).encode()).hexdigest()[:8] if paths else "all"
    folder = _venv._tmp_root() / f"src-{repo.replace('/', '+')}-{key or full[:10]}-{part}"
    stamp = folder / ".errkb-export"
    if not stamp.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "--git-dir", str(git), "archive", "--format=tar", full, "--", *paths],
                                 capture_output=True)
        if archive.returncode == 0:
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
                tar.extractall(folder, filter="data")
        else:  # a snapshot without its largest files (4 MiB and more): the files one by one, skipping those
            missing = _export_files(git, full, paths, folder)
            ctx.note(f"not in the clone, left out: {', '.join(missing[:5])}" + (" ..." if len(missing) > 5 else ""))
        stamp.write_text(full)
    ctx.note(f"{repo} at {full[:10]}" + (f": {', '.join(paths)}" if paths else "") + " (git archive of a local clone)")
    return folder


def _export_files(git: Path, commit: str, paths, folder: Path) -> list[str]:
    listing = subprocess.run(["git", "--git-dir", str(git), "ls-tree", "-r", "-z", commit, "--", *paths],
                             capture_output=True, check=True).stdout.decode()
    missing = []
    for entry in filter(None, listing.split("\0")):
        meta, name = entry.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob" or mode == "120000":
            continue
        blob = subprocess.run(["git", "--git-dir", str(git), "cat-file", "blob", sha], capture_output=True)
        if blob.returncode != 0:
            missing.append(name)
            continue
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob.stdout)
    return missing
