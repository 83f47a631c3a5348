"""Lint a tree: find the files, reuse cached results, fan out over processes.

The cache holds one JSON file per (content hash, module name, rule set, archs, records' wording,
linter source) so an unchanged tree re-lints by reading hashes; output order never depends on
the number of processes. Nothing here imports libcst: the engine (and the rules) are imported
only when a file passes the prefilter, so a run over files without kernel calls starts fast.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from errkb.lint import pins as pins_mod
from errkb.lint.config import Config
from errkb.lint.deadline import FileTimeout, time_limit
from errkb.lint.filekinds import is_command_file
from errkb.lint.prefilter import may_match, tokens_of
from errkb.lint.results import MAX_BYTES, FileResult, Finding
from errkb.lint.table import RecordTexts, RuleRow, linter_fingerprint

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


def _not_regular(mode: int) -> str:
    for test, what in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return f"not a regular file ({what})"
    return "not a regular file"


def discover(paths: list[Path], cfg: Config,
             pin_dirs: dict[str, list[str]] | None = None) -> tuple[list[tuple[str, str]], list[FileResult]]:
    """(path, path relative to the config root) of the Python files and launch-command files
    (shell scripts, Dockerfiles, YAML: filekinds.is_command_file) under `paths`, sorted, with
    excludes applied. Symlink loops, broken symlinks and things that are not regular files
    (FIFOs, sockets, devices: reading one could block forever) are reported instead. Strings,
    not Path objects: a warm run over thousands of files is mostly this walk. With `pin_dirs`, the
    walk also notes each folder's pin files (lint/pins.py: requirements*.txt, pyproject.toml, ...)."""
    files: dict[str, str] = {}
    problems: list[FileResult] = []
    for top in paths:
        try:
            mode = os.stat(top).st_mode
        except OSError:
            why = "broken symlink (or symlink loop)" if os.path.islink(top) else "no such file or directory"
            problems.append(FileResult(str(top), skipped=why))
            continue
        name = Path(top).as_posix()
        if stat.S_ISDIR(mode):
            _walk(name, cfg, files, problems, pin_dirs)
        elif not cfg.excluded(rel := _rel(name, cfg)):
            if stat.S_ISREG(mode):
                files[name] = rel
            else:
                problems.append(FileResult(name, skipped=_not_regular(mode)))
    return sorted(files.items()), problems


def _walk(top: str, cfg: Config, files: dict[str, str], problems: list[FileResult],
          pin_dirs: dict[str, list[str]] | None = None) -> None:
    """Follows symlinked folders, once each (a folder seen again is a loop)."""
    seen: set[tuple[int, int]] = set()
    stack = [top]
    while stack:
        d = stack.pop()
        try:
            st = os.stat(d)
            entries = list(os.scandir(d))
        except OSError as exc:
            problems.append(FileResult(d, skipped=f"cannot read folder: {exc.strerror or exc}"))
            continue
        if (st.st_dev, st.st_ino) in seen:
            problems.append(FileResult(d, skipped="symlink loop"))
            continue
        seen.add((st.st_dev, st.st_ino))
        d_rel = _rel(d, cfg)  # a file in d is under the root exactly when d is
        pins_here = pin_dirs.setdefault(os.path.abspath(d), []) if pin_dirs is not None else None
        prefix, rel_prefix = ("" if d == "." else d + "/"), ("" if d_rel == "." else d_rel + "/")
        for entry in entries:
            name = entry.name
            if entry.is_dir():
                if name not in SKIP_DIRS and not cfg.excluded(_rel(prefix + name, cfg)):
                    stack.append(prefix + name)
            elif (name.endswith(".py") or is_command_file(name)) and not cfg.excluded(rel := rel_prefix + name):
                p = prefix + name
                if pins_here is not None and name == "setup.py":
                    pins_here.append(name)
                if entry.is_file():
                    files[p] = rel
                elif entry.is_symlink() and not os.path.exists(p):
                    problems.append(FileResult(p, skipped="broken symlink (or symlink loop)"))
                else:
                    try:
                        problems.append(FileResult(p, skipped=_not_regular(os.stat(p).st_mode)))
                    except OSError as exc:
                        problems.append(FileResult(p, skipped=f"cannot read: {exc.strerror or exc}"))
            elif pins_here is not None and pins_mod.is_pin_file(name):
                pins_here.append(name)


_ROOTS: dict[Path, str] = {}


def _rel(p: str | Path, cfg: Config) -> str:
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


def cache_dir_of(cfg: Config, use_cache: bool) -> Path | None:
    return (cfg.cache_dir or cfg.root / ".errkb-cache") if use_cache else None


# results that depend on the moment (or on this machine's speed) are neither cached nor kept
_TRANSIENT = ("internal error", "cannot read", "timed out", "not a regular file")


# ------------------------------------------------------------------ worker side

_W: dict = {}  # this worker's state for the current run, set afresh by _init at each run


def _init(rows: dict[str, RuleRow], archs, texts: RecordTexts, report_unused, cache_dir, key,
          file_timeout, versions, root=".", pin_dirs=None) -> None:
    _W.clear()
    _W.update(rows=rows, archs=archs if archs is None else tuple(archs), texts=texts, report_unused=report_unused, cache_dir=cache_dir,
              key=key, timeout=file_timeout, tokens=tokens_of(r.prefilter for r in rows.values()),
              versions=dict(versions), root=str(root), pin_dirs=pin_dirs)


def _engine() -> tuple:
    """The heavy half (libcst, the rule classes, the records' wording), loaded the first time a
    file passes the prefilter, once per process."""
    heavy = _W.get("engine")
    if heavy is None:
        from errkb.lint.analysis import ModuleNames
        from errkb.lint.engine import lint_source
        from errkb.lint.rule import all_rules

        rules = {c: cls() for c, cls in all_rules().items() if c in _W["rows"]}
        heavy = _W["engine"] = (lint_source, rules, ModuleNames(), _W["texts"].load())
    return heavy


def _read(path: str) -> bytes | str:
    """The file's bytes, or why it cannot be linted. Opened without blocking and checked with
    fstat, so a FIFO that replaced a file after the walk cannot hang the run."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    with open(fd, "rb") as fh:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return _not_regular(st.st_mode)
            if st.st_size > MAX_BYTES:
                return f"larger than {MAX_BYTES} bytes"
            return fh.read(MAX_BYTES + 1)
        except OSError as exc:
            return f"cannot read: {exc.strerror or exc}"


def _lint_one(job: tuple[str, str, list[str]]) -> tuple[FileResult, bool]:
    path, rel, ignored = job
    source = _read(path)
    if isinstance(source, str):
        return FileResult(rel, skipped=source), False
    return _lint_bytes(source, path, rel, ignored)


def _lint_bytes(source: bytes, path: str, rel: str, ignored: list[str]) -> tuple[FileResult, bool]:
    """(result, served from the cache) for one file's bytes; `path` names its module."""
    rows = list(_W["rows"].values())
    tokens = _W["tokens"]
    if ignored:
        rows = [r for r in rows if not any(r.code.startswith(i.upper()) or r.name == i for i in ignored)]
        tokens = tokens_of(r.prefilter for r in rows)
    wants_unused = _W["report_unused"] and b"errkb:" in source
    if not wants_unused and not may_match(source, tokens):
        return FileResult(rel), False
    lint_source, rule_objects, module_names, texts = _engine()
    rules = [rule_objects[r.code] for r in rows]
    mod = module_names(Path(path))
    pinned = pins_mod.project_versions(path, _W["root"], _W["pin_dirs"]) if _W["pin_dirs"] is not None else {}
    cache_file = None
    if _W["cache_dir"] is not None:
        h = hashlib.sha256(_W["key"].encode())
        h.update(b"\0" + mod.encode() + b"\0" + ",".join(r.CODE for r in rules).encode() + b"\0")
        h.update(json.dumps(sorted(pinned.items())).encode() + b"\0")
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
        with time_limit(_W["timeout"]):
            result = lint_source(source, rel, rules, _W["archs"], texts, module=mod,
                                 report_unused=_W["report_unused"], tokens=tokens, versions=_W["versions"],
                                 pinned=pinned)
    except FileTimeout:
        gc.enable()  # the timer may have fired while the engine paused the collector
        result = FileResult(rel, skipped=f"timed out: the analysis took longer than {_W['timeout']:g} s"
                                         " (the per-file limit: --file-timeout, or file-timeout in [tool.errkb])")
    except Exception as exc:  # a linter bug must not hide the other files
        result = FileResult(rel, skipped=f"internal error: {type(exc).__name__}: {exc}")
    if cache_file is not None and not (result.skipped or "").startswith(_TRANSIENT):
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


def _setup(cfg: Config, codes: list[str], texts: RecordTexts, use_cache: bool,
           rows: dict[str, RuleRow] | None, pin_dirs: dict[str, list[str]] | None = None) -> tuple:
    """The worker's init arguments: selected rule rows, archs, texts, cache folder and key, the
    configuration root and the pin files per folder (None: pins do not matter for this run)."""
    cache_dir = cache_dir_of(cfg, use_cache)
    if rows is None:
        from errkb.lint.table import rule_table

        rows = rule_table(cache_dir)
    rows = {c: rows[c] for c in codes}
    key = json.dumps([linter_fingerprint(), cfg.archs and sorted(cfg.archs), cfg.report_unused, sorted(cfg.versions.items()),
                      texts.digest()])
    return (rows, cfg.archs, texts, cfg.report_unused, cache_dir, key, cfg.file_timeout, cfg.versions,
            cfg.root, pin_dirs)


def lint_stdin(source: bytes, name: Path, cfg: Config, codes: list[str], texts: RecordTexts,
               use_cache: bool = True, rows: dict[str, RuleRow] | None = None) -> Run:
    """Lint bytes read from standard input as if they were the file `name` (which need not
    exist): excludes, per-file ignores, the module name and the reported path follow it."""
    rel = _rel(name, cfg)
    if cfg.excluded(rel):
        return Run()
    pin_dirs = {} if pins_mod.wanted(codes, cfg.versions) else None
    if pin_dirs is not None:
        pins_mod.complete(pin_dirs, [str(name)], cfg.root)
    _init(*_setup(cfg, codes, texts, use_cache, rows, pin_dirs))
    result, hit = _lint_bytes(source, str(name), rel if name.is_absolute() else name.as_posix(),
                              cfg.ignored_for(rel))
    return Run(results=[result] if result.findings or result.skipped else [], files=1, cached=int(hit))


def lint_paths(paths: list[Path], cfg: Config, codes: list[str], texts: RecordTexts,
               jobs: int = 1, use_cache: bool = True, rows: dict[str, RuleRow] | None = None) -> Run:
    """Lint every Python and launch-command file under `paths`. With the cache on, a file whose
    size, mtime, ctime and inode are those of the last run reuses that run's result without being
    read (the manifest); any other file is looked up by content hash before it is parsed."""
    pin_dirs = {} if pins_mod.wanted(codes, cfg.versions) else None
    files, problems = discover(paths, cfg, pin_dirs)
    run = Run(results=list(problems), files=len(files))
    pin_digest = pins_mod.complete(pin_dirs, files, cfg.root) if pin_dirs is not None else ""
    init_args = _setup(cfg, codes, texts, use_cache, rows, pin_dirs)
    cache_dir, key = init_args[4], init_args[5]
    pfi = bool(cfg.per_file_ignores)
    jobs_list = [(p, rel if os.path.isabs(p) else p, cfg.ignored_for(rel) if pfi else [])
                 for p, rel in files]

    manifest_path, old, new = None, {}, {}
    if cache_dir is not None:
        tag = hashlib.sha256(json.dumps([key, sorted(codes), os.path.abspath(cfg.root), pin_digest]).encode()).hexdigest()
        manifest_path = Path(cache_dir, f"manifest-{tag[:20]}.json")
        try:
            old = json.loads(manifest_path.read_text())
        except (OSError, ValueError):
            old = {}
    # manifest entries: [signature] for a clean file, [signature, findings, why skipped] otherwise
    todo = []
    for i, (path, rel, ignored) in enumerate(jobs_list):
        sig = _signature(path, ignored) if manifest_path else None
        entry = old.get(rel) if sig else None
        if entry and entry[0] == sig:
            try:
                if len(entry) > 1:
                    run.results.append(FileResult(rel, [Finding(**{**f, "path": rel}) for f in entry[1]], entry[2]))
            except (TypeError, IndexError):  # a damaged manifest: lint the file again
                todo.append((i, sig))
                continue
            new[rel] = entry
            run.cached += 1
        else:
            todo.append((i, sig))

    if jobs <= 0:
        jobs = 1 if len(todo) < 64 else min(os.cpu_count() or 1, 8)
    work = [jobs_list[i] for i, _ in todo]
    if jobs == 1 or len(work) <= 1:
        _init(*init_args)
        got = list(map(_lint_one, work))
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
        with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init, initargs=init_args) as pool:
            # big files first, a few at a time, so no process is left with the heavy tail
            order = sorted(range(len(work)), key=lambda k: -_size(work[k][0]))
            results = list(pool.map(_lint_one, [work[k] for k in order], chunksize=4))
            got = [None] * len(work)
            for k, result in zip(order, results):
                got[k] = result
    for (i, sig), (result, hit) in zip(todo, got):
        run.cached += hit
        if result.findings or result.skipped:
            run.results.append(result)
        if sig and not (result.skipped or "").startswith(_TRANSIENT):
            findings = [{**f.to_json(), "path": ""} for f in result.findings]
            new[jobs_list[i][1]] = [sig, findings, result.skipped] if findings or result.skipped else [sig]
    if manifest_path is not None and (todo or len(new) != len(old)):
        try:
            manifest_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = manifest_path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(new, separators=(",", ":")))
            os.replace(tmp, manifest_path)
        except OSError:
            pass
    run.results.sort(key=lambda r: r.path)
    return run
