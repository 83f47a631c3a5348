"""Version ordering for harvested releases (PEP 440, with a fallback for odd tags)."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version


def version_key(version: str) -> tuple:
    """Sort key: PEP 440 order where possible, plain text after every valid version."""
    try:
        return (0, Version(version), "")
    except InvalidVersion:
        return (1, Version("0"), version)


def newest(versions: list[str]) -> str:
    return max(versions, key=version_key)
