"""`[tool.errkb]` in pyproject.toml; command-line flags override it.

    [tool.errkb]
    gpu-archs = ["sm90", "sm100"]          # arch-dependent rules fire only for these
    select = ["EKB1", "EKB201"]            # codes or code prefixes (default: every rule)
    ignore = ["EKB302"]
    exclude = ["third_party/**", "*_pb2.py"]
    report-unused-suppressions = true
    cache-dir = ".errkb-cache"
    file-timeout = 60                      # seconds per file; 0: no limit

    [tool.errkb.per-file-ignores]
    "tests/**" = ["EKB101", "EKB2"]

    [tool.errkb.versions]                  # target releases for the configuration rules (EKB6-8)
    vllm = "0.11.0"
    sglang = "0.5.10"
    transformers = "4.56.0"
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from errkb.lint.archs import ALL_ARCHS

KEYS = {"gpu-archs", "select", "ignore", "exclude", "per-file-ignores", "report-unused-suppressions",
        "cache-dir", "file-timeout", "versions"}
DEFAULT_FILE_TIMEOUT = 60.0  # seconds; generous: a 5 MB file is parsed and analysed well within it
VERSIONED = ("vllm", "sglang", "transformers")


class ConfigError(ValueError):
    pass


@dataclass
class Config:
    archs: tuple[str, ...] | None = None  # None: not configured (DEFAULT_ARCHS, said in the findings)
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    report_unused: bool = False
    cache_dir: Path | None = None
    file_timeout: float = DEFAULT_FILE_TIMEOUT  # 0: no limit
    versions: dict[str, str] = field(default_factory=dict)  # package -> target release
    root: Path = field(default_factory=Path.cwd)  # where relative globs and the cache live

    def excluded(self, rel: str) -> bool:
        return any(_match(rel, pat) for pat in self.exclude)

    def ignored_for(self, rel: str) -> list[str]:
        return [c for pat, codes in self.per_file_ignores.items() if _match(rel, pat) for c in codes]


def _match(rel: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel, pattern + "/*"):
        return True
    if pattern.endswith("/**") and (rel == pattern[:-3] or rel.startswith(pattern[:-3] + "/")):
        return True
    return "/" not in pattern and any(fnmatch.fnmatch(part, pattern) for part in rel.split("/"))


def find_pyproject(start: Path) -> Path | None:
    start = start.resolve()
    for d in [start, *start.parents]:
        p = d / "pyproject.toml"
        if p.is_file():
            return p
    return None


def check_archs(archs) -> tuple[str, ...]:
    bad = [a for a in archs if a not in ALL_ARCHS]
    if bad:
        raise ConfigError(f"unknown GPU arch {', '.join(bad)} (known: {', '.join(ALL_ARCHS)})")
    return tuple(dict.fromkeys(archs))


def load(start: Path | None = None) -> Config:
    start = start or Path.cwd()
    path = find_pyproject(start)
    if path is None:
        return Config(root=start.resolve())
    try:
        table = tomllib.loads(path.read_text()).get("tool", {}).get("errkb", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    table = {k.replace("_", "-"): v for k, v in table.items()}
    cfg = Config(root=path.parent)
    if "gpu-archs" in table:
        cfg.archs = check_archs(_strings(table, "gpu-archs", path))
    if "select" in table:
        cfg.select = _strings(table, "select", path)
    cfg.ignore = _strings(table, "ignore", path) if "ignore" in table else []
    cfg.exclude = _strings(table, "exclude", path) if "exclude" in table else []
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict) or not all(isinstance(v, list) for v in pfi.values()):
        raise ConfigError(f"{path}: [tool.errkb.per-file-ignores] maps globs to lists of codes")
    cfg.per_file_ignores = {k: [str(c) for c in v] for k, v in pfi.items()}
    cfg.report_unused = bool(table.get("report-unused-suppressions", False))
    if "cache-dir" in table:
        cfg.cache_dir = path.parent / str(table["cache-dir"])
    if "file-timeout" in table:
        cfg.file_timeout = check_timeout(table["file-timeout"], f"{path}: [tool.errkb] file-timeout")
    versions = table.get("versions", {})
    if not isinstance(versions, dict):
        raise ConfigError(f"{path}: [tool.errkb.versions] maps package names to versions")
    cfg.versions = check_versions([f"{k}=={v}" for k, v in versions.items()], str(path))
    return cfg


def check_timeout(value, what: str = "--file-timeout") -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e6:
        raise ConfigError(f"{what} must be a number of seconds >= 0 (0: no limit), not {value!r}")
    return float(value)


def check_versions(specs: list[str], where: str = "--target-version") -> dict[str, str]:
    """'vllm==0.11.0' strings to {package: version}; the packages the configuration rules know."""
    import re

    out = {}
    for spec in specs:
        name, sep, version = spec.partition("==")
        name = name.strip().lower()
        if not sep or name not in VERSIONED or not re.fullmatch(r"\d+(\.\d+)*([.+]?\w+)*", version.strip()):
            raise ConfigError(f"{where}: {spec!r} is not PACKAGE==VERSION with PACKAGE one of {', '.join(VERSIONED)}")
        out[name] = version.strip()
    return out


def _strings(table: dict, key: str, path: Path) -> list[str]:
    value = table[key]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: [tool.errkb] {key} must be a list of strings")
    return value


def selected(names: dict[str, str], select: list[str] | None, ignore: list[str]) -> list[str]:
    """Codes (of `names`: code -> rule name) kept by select/ignore; both take codes, code
    prefixes or rule names."""

    def hit(code: str, pats: list[str]) -> bool:
        return any(code.startswith(p.upper()) or names[code] == p for p in pats)

    for p in [*(select or []), *ignore]:
        if not any(c.startswith(p.upper()) or names[c] == p for c in names) and p.upper() != "EKB000":
            raise ConfigError(f"unknown rule {p!r} (see `errkb rules`)")
    return [c for c in names if (select is None or hit(c, select)) and not hit(c, ignore)]
