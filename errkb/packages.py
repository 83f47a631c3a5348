"""Which upstream packages errkb harvests, and where their files live upstream."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from errkb import layout


@lru_cache(maxsize=None)
def _glob_regex(glob: str) -> re.Pattern[str]:
    """`**` crosses folders, `*` and `?` stay inside one path segment."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out))


def glob_match(glob: str, path: str) -> bool:
    return _glob_regex(glob).fullmatch(path) is not None


@dataclass(frozen=True)
class Registry:
    """Where `errkb update` finds a package's releases, and which file of a release it harvests."""

    pypi: str  # project name on PyPI
    files: tuple[str, ...] = ()  # filename globs, best first: the first that a release has is harvested
    git_tag: bool = False  # harvest the release's git tag instead (its files lack what the harvest reads)


def _registry(name: str, raw: dict | None, tag: str | None) -> Registry | None:
    if raw is None:
        return None
    files, git_tag = tuple(raw.get("files", ())), bool(raw.get("git_tag", False))
    if not isinstance(raw.get("pypi"), str) or files and git_tag or not (files or git_tag) or git_tag and not tag:
        raise ValueError(f"packages.json: {name}.registry needs a 'pypi' name and either 'files' (filename "
                         "globs) or 'git_tag': true (with a release tag format)")
    return Registry(pypi=raw["pypi"], files=files, git_tag=git_tag)


@dataclass(frozen=True)
class PackageConfig:
    name: str
    repo: str  # GitHub owner/name
    tag: str | None  # release tag format, e.g. "v{version}"; None when releases are not tagged
    path_map: tuple[tuple[str, str], ...]  # distribution path prefix -> repository path prefix
    include: tuple[str, ...]  # globs on distribution paths (see glob_match)
    exclude: tuple[str, ...]
    info_lines: bool = False  # harvest logger.info lines too (vLLM explains its backend choice at INFO)
    registry: Registry | None = None  # None: not released on a registry (errkb update skips it)

    def in_scope(self, dist_path: str) -> bool:
        return any(glob_match(g, dist_path) for g in self.include) and not any(
            glob_match(g, dist_path) for g in self.exclude)

    def repo_path(self, dist_path: str) -> str:
        for src, dst in self.path_map:
            if dist_path.startswith(src):
                return dst + dist_path[len(src):]
        return dist_path

    def dist_path(self, repo_path: str) -> str:
        """The inverse of repo_path: where a repository file lands in the distribution."""
        for src, dst in self.path_map:
            if repo_path.startswith(dst):
                return src + repo_path[len(dst):]
        return repo_path

    def ref_for(self, version: str) -> str | None:
        return self.tag.format(version=version) if self.tag else None


def load_packages(data_dir: Path) -> dict[str, PackageConfig]:
    raw = json.loads(layout.packages_path(data_dir).read_text())
    return {
        name: PackageConfig(
            name=name, repo=cfg["repo"], tag=cfg.get("tag"),
            path_map=tuple(tuple(p) for p in cfg.get("path_map", [])),
            include=tuple(cfg["include"]), exclude=tuple(cfg.get("exclude", [])),
            info_lines=cfg.get("info_lines", False), registry=_registry(name, cfg.get("registry"), cfg.get("tag")))
        for name, cfg in raw.items()
    }
