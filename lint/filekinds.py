"""Which non-Python files are linted as launch commands (shell scripts, Dockerfiles, compose and
Kubernetes YAML, training configs, Markdown shell blocks, Jupyter notebooks). A module of its own,
importing nothing, so the tree walk can ask without loading the launch parsers (lint/commands.py),
which import libcst through the rule classes."""

from __future__ import annotations

_SHELL_SUFFIXES = (".sh", ".bash")
_YAML_SUFFIXES = (".yaml", ".yml")
_MARKDOWN_SUFFIXES = (".md", ".markdown")


def file_kind(name: str) -> str | None:
    """'shell', 'docker', 'yaml', 'markdown' or 'notebook' for the file types linted as launch
    commands (a notebook's Python cells too), else None."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    low = base.lower()
    if low.endswith(_SHELL_SUFFIXES):
        return "shell"
    if low.endswith(_YAML_SUFFIXES):
        return "yaml"
    if low.endswith(_MARKDOWN_SUFFIXES):
        return "markdown"
    if low.endswith(".ipynb"):
        return "notebook"
    if low in ("dockerfile", "containerfile") or low.startswith(("dockerfile.", "containerfile.")) \
            or low.endswith(".dockerfile"):
        return "docker"
    return None


def is_command_file(name: str) -> bool:
    return file_kind(name) is not None
