"""Lint a tree: find the files, reuse cached results, fan out over processes.

The cache holds one JSON file per (content hash, module name, rule set, archs, errkb version,
linter source) so an unchanged tree re-lints by reading hashes; output order never depends on
the number of processes.
"""

from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from errkb.lint.analysis import ModuleNames
from errkb.lint.commands import is_command_file
from errkb.lint.config import Config
from errkb.lint.engine import FileResult, Finding, RecordText, lint_source, may_match, prefilter_tokens
from errkb.lint.rule import all_rules

SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "__pycache__", "node_modules", ".errkb-cache",
             ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache"}


@dataclass
class Run:
    results: list[FileResult] = field(default_factory=list)
    files: int = 0
    cached: int = 0

    @property
    def findings(self) -> list[Finding]:
        return sorted(f for r in self.results for f in r.findings)

    @property
    def skipped(self) -> list[FileResult]:
        return [r for r in self.results if r.skipped]


def discover(paths: list[Path], cfg: Config) -> tuple[list[Path], list[FileResult]]:
    """Python files under `paths` (sorted, excludes applied); symlink loops are reported."""
    files: set[Path] = set()
    problems: list[FileResult] = []
    for top in paths:
        if not top.exists() and not top.is_symlink():
            problems.append(FileResult(str(top), skipped="no such file or directory"))
            continue
        if top.is_symlink() and not top.exists():
            problems.append(FileResult(str(top), skipped="broken symlink (or symlink loop)"))
            continue
        if top.is_file():
            if not cfg.excluded(_rel(top, cfg)):
                files.add(top)
            continue
        seen: set[tuple[int, int]] = set()
        for dirpath, dirnames, filenames in os.walk(top, followlinks=True):
            st = os.stat(dirpath)
            key = (st.st_dev, st.st_ino)
            if key in seen:
                problems.append(FileResult(Path(dirpath).as_posix(), skipped="symlink loop"))
                dirnames[:] = []
                continue
            seen.add(key)
            d = Path(dirpath)
            dirnames[:] = sorted(n for n in dirnames
                                 if n not in SKIP_DIRS and not cfg.excluded(_rel(d / n, cfg)))
            for name in filenames:
                if name.endswith(".py") or is_command_file(name):
                    p = d / name
                    if p.is_symlink() and not p.exists():
                        problems.append(FileResult(str(p), skipped="broken symlink (or symlink loop)"))
                    elif not cfg.excluded(_rel(p, cfg)):
                        files.add(p)
    return sorted(files), problems


_ROOTS: dict[Path, str] = {}


def _rel(p: Path, cfg: Config) -> str:
    """Path relative to the config root, by string operations only (no symlink resolution)."""
    root = _ROOTS.get(cfg.root)
    if root is None:
        root = _ROOTS[cfg.root] = os.path.abspath(cfg.root)
    ap = os.path.abspath(p)
    if ap == root:
        return "."
    if ap.startswith(root + os.sep):
        return ap[len(root) + 1:].replace(os.sep, "/")
    return Path(p).as_posix()


def _linter_fingerprint() -> str:
    h = hashlib.sha256()
    try:
        h.update(metadata.version("errkb").encode())
    except metadata.PackageNotFoundError:
        h.update(b"unknown")
    for p in sorted(Path(__file__).parent.rglob("*.py")):
        h.update(p.read_bytes())
    return h.hexdigest()


# ------------------------------------------------------------------ worker side

_W: dict = {}  # this worker's state for the current run, set afresh by _init at each run


def _init(codes: list[str], archs, texts, report_unused, cache_dir, key, versions=None) -> None:
    rules = [cls() for c, cls in all_rules().items() if c in codes]
    _W.clear()
    _W.update(rules=rules, archs=tuple(archs), texts=texts, report_unused=report_unused,
              cache_dir=cache_dir, key=key, tokens=prefilter_tokens(rules), module_names=ModuleNames(),
              versions=dict(versions or {}))


def _lint_one(job: tuple[str, str, list[str]]) -> tuple[FileResult, bool]:
    path, rel, ignored = job
    try:
        with open(path, "rb") as fh:
            source = fh.read()
    except OSError as exc:
        return FileResult(rel, skipped=f"cannot read: {exc.strerror or exc}"), False
    rules = _W["rules"]
    if ignored:
        rules = [r for r in rules if not any(r.CODE.startswith(i.upper()) or r.NAME == i for i in ignored)]
    wants_unused = _W["report_unused"] and b"errkb:" in source
    tokens = prefilter_tokens(rules) if ignored else _W["tokens"]
    if not wants_unused and not may_match(source, tokens):
        return FileResult(rel), False
    mod = _W["module_names"](Path(path))
    cache_file = None
    if _W["cache_dir"] is not None:
        h = hashlib.sha256(_W["key"].encode())
        h.update(b"\0" + mod.encode() + b"\0" + ",".join(r.CODE for r in rules).encode() + b"\0")
        h.update(source)
        digest = h.hexdigest()
        cache_file = Path(_W["cache_dir"], digest[:2], digest[2:] + ".json")
        try:
            data = json.loads(cache_file.read_text())
            return FileResult(rel, [Finding(**{**f, "path": rel}) for f in data["findings"]],
                              data["skipped"]), True
        except (OSError, ValueError, TypeError, KeyError):
            pass
    try:
        result = lint_source(source, rel, rules, _W["archs"], _W["texts"], module=mod,
                             report_unused=_W["report_unused"], tokens=tokens, versions=_W["versions"])
    except Exception as exc:  # a linter bug must not hide the other files
        result = FileResult(rel, skipped=f"internal error: {type(exc).__name__}: {exc}")
    if cache_file is not None and not (result.skipped or "").startswith("internal error"):
        try:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"findings": [f.to_json() for f in result.findings],
                                       "skipped": result.skipped}))
            os.replace(tmp, cache_file)
        except OSError:
            pass
    return result, False


# ------------------------------------------------------------------ driver


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _signature(path: str, ignored: list[str]) -> list | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, ignored]


def lint_paths(paths: list[Path], cfg: Config, codes: list[str], texts: dict[str, RecordText],
               jobs: int = 1, use_cache: bool = True) -> Run:
    """Lint every Python file under `paths`. With the cache on, a file whose size, mtime, ctime
    and inode are those of the last run reuses that run's result without being read (the
    manifest); any other file is looked up by content hash before it is parsed."""
    files, problems = discover(paths, cfg)
    run = Run(results=list(problems), files=len(files))
    cache_dir = (cfg.cache_dir or cfg.root / ".errkb-cache") if use_cache else None
    key = json.dumps([_linter_fingerprint(), sorted(cfg.archs), cfg.report_unused, sorted(cfg.versions.items()),
                      sorted((k, v.template, v.message) for k, v in texts.items())])
    jobs_list = [(str(p), _rel(p, cfg) if p.is_absolute() else p.as_posix(), cfg.ignored_for(_rel(p, cfg)))
                 for p in files]

    manifest_path, old, new = None, {}, {}
    if cache_dir is not None:
        tag = hashlib.sha256(json.dumps([key, sorted(codes), os.path.abspath(cfg.root)]).encode()).hexdigest()
        manifest_path = Path(cache_dir, f"manifest-{tag[:20]}.json")
        try:
            old = json.loads(manifest_path.read_text())
        except (OSError, ValueError):
            old = {}
    collected: list = [None] * len(jobs_list)
    todo = []
    for i, (path, rel, ignored) in enumerate(jobs_list):
        sig = _signature(path, ignored) if manifest_path else None
        entry = old.get(rel) if sig else None
        if entry and entry[0] == sig:
            data = entry[1]
            collected[i] = (FileResult(rel, [Finding(**{**f, "path": rel}) for f in data["findings"]],
                                       data["skipped"]), True)
            new[rel] = entry
        else:
            todo.append((i, sig))

    init_args = (codes, cfg.archs, texts, cfg.report_unused, cache_dir, key, cfg.versions)
    if jobs <= 0:
        jobs = 1 if len(todo) < 64 else min(os.cpu_count() or 1, 8)
    work = [jobs_list[i] for i, _ in todo]
    if jobs == 1 or len(work) <= 1:
        _init(*init_args)
        got = list(map(_lint_one, work))
    else:
        import multiprocessing

        ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
        with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init, initargs=init_args) as pool:
            # big files first, a few at a time, so no process is left with the heavy tail
            order = sorted(range(len(work)), key=lambda k: -_size(work[k][0]))
            results = list(pool.map(_lint_one, [work[k] for k in order], chunksize=4))
            got = [None] * len(work)
            for k, result in zip(order, results):
                got[k] = result
    for (i, sig), (result, hit) in zip(todo, got):
        collected[i] = (result, hit)
        if sig and not (result.skipped or "").startswith(("internal error", "cannot read")):
            new[jobs_list[i][1]] = [sig, {"findings": [{**f.to_json(), "path": ""} for f in result.findings],
                                          "skipped": result.skipped}]
    if manifest_path is not None and new != old:
        try:
            manifest_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = manifest_path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(new, separators=(",", ":")))
            os.replace(tmp, manifest_path)
        except OSError:
            pass
    for result, hit in collected:
        run.cached += hit
        if result.findings or result.skipped:
            run.results.append(result)
    run.results.sort(key=lambda r: r.path)
    return run
