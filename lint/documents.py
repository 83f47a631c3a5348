"""Launch commands and code in documents: Markdown fenced shell blocks and Jupyter notebooks.

Serving recipes and model cards live in READMEs (```bash blocks with `vllm serve ...`) and in
notebooks (`!vllm serve ...`, `%%bash` cells, and Python cells that call `LLM(...)` or
`from_pretrained(...)`). Both are read with the same parsers as scripts and Python files, and every
position is one in the original file:

- Markdown: the body of each fenced block (``` or ~~~) whose info string names a shell (bash, sh,
  shell, console, zsh, ...) is shell text. In a block with prompts (`$ cmd`, `(venv) $ cmd`) only the
  prompted lines and their backslash continuations are commands; the prompt and the output lines are
  blanked in place (same length), so offsets do not move.
- Notebooks (nbformat 4): the code cells' `source` strings are decoded with their offsets in the
  JSON text. `!cmd` lines (with backslash continuations), `%%bash`/`%%sh`/`%%script bash`/`%%shell`
  cells and `%env NAME=value` are shell; the rest of each code cell, magics blanked, is one Python
  module (the cells in order; a cell that does not parse on its own is left out), linted by the
  Python engine and mapped back. A finding in a notebook carries no autofix.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
from functools import lru_cache

from errkb.lint.launch import Span

SHELL_FENCES = {"bash", "sh", "shell", "console", "zsh", "shell-session", "bash-session", "sh-session",
                "shellsession", "terminal"}
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^`\s{]*)[^\n]*$", re.M)
_PROMPT = re.compile(r"^([ \t]*(?:\([^)\n]*\)[ \t]*)?[$%][ \t])", re.M)


# ------------------------------------------------------------------ Markdown


def _fenced_blocks(text: str):
    """(info string, body start, body end) of each fenced block (``` or ~~~, in lists too)."""
    pos = 0
    while True:
        m = _FENCE.search(text, pos)
        if m is None:
            return
        fence, info = m.group(1), m.group(2).lower().lstrip(".")
        body = m.end() + 1
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M).search(text, body)
        end = close.start() if close else len(text)
        pos = close.end() if close else len(text)
        yield info, body, end


def markdown_shell(text: str) -> tuple[str, list[tuple[int, int]]]:
    """(text with everything but shell commands blanked, ranges of the shell blocks' bodies). The
    returned text has the same length and newlines as `text`."""
    out = list(text)
    blocks = []
    for info, body, end in _fenced_blocks(text):
        if info in SHELL_FENCES and body < end:
            _blank_prompts(text, out, body, end)
            blocks.append((body, end))
    return "".join(out), blocks


def markdown_code(text: str) -> str:
    """`text` with everything outside the bodies of fenced blocks (any info string) blanked, same
    length and newlines: where a Markdown file's own pins are read (lint/pins.py). Prose often
    names a version as one option among several; a fenced `pip install vllm==X` or image is what
    the file runs."""
    out = [c if c == "\n" else " " for c in text]
    for _, body, end in _fenced_blocks(text):
        out[body:end] = text[body:end]
    return "".join(out)


def _blank_prompts(text: str, out: list[str], start: int, end: int) -> None:
    """In a block that shows prompts, keep only the prompted lines (prompt blanked) and their
    continuations; blank the output lines."""
    lines, pos = [], start
    for line in text[start:end].split("\n"):
        lines.append((pos, pos + len(line)))
        pos += len(line) + 1
    if not any(_PROMPT.match(text, a, b) for a, b in lines):
        return
    continued = False
    for a, b in lines:
        prompt = _PROMPT.match(text, a, b)
        if prompt:
            out[a:prompt.end()] = " " * (prompt.end() - a)
        elif not continued:
            out[a:b] = " " * (b - a)
        continued = (prompt is not None or continued) and text[a:b].rstrip().endswith("\\")


# ------------------------------------------------------------------ notebooks


class _PosStr(str):
    """A decoded JSON string that knows where its text starts in the file."""

    pos: int = 0


def _parse_string(s, end, strict=True):
    value, new_end = json.decoder.py_scanstring(s, end, strict)
    out = _PosStr(value)
    out.pos = end
    return out, new_end


def _decoder() -> json.JSONDecoder:
    dec = json.JSONDecoder()
    dec.parse_string = _parse_string
    dec.scan_once = json.scanner.py_make_scanner(dec)
    return dec


def _char_offsets(raw: str, s: _PosStr) -> tuple[list[int], list[int]]:
    """Where each character of the decoded string `s` starts and ends in the raw JSON text."""
    starts, ends = [], []
    i = s.pos
    for _ in range(len(s)):
        j = i + 1
        if raw[i] == "\\":
            j = i + 2
            if raw[i + 1] == "u":
                j = i + 6
                if 0xD800 <= int(raw[i + 2:i + 6], 16) < 0xDC00 and raw[j:j + 2] == "\\u":
                    j += 6  # a surrogate pair is one character once decoded
        starts.append(i)
        ends.append(j)
        i = j
    return starts, ends


class Virtual:
    """Text assembled from pieces of the file, with each character's place in the file."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.lines = 1  # the line the next text goes on

    def add(self, text: str, starts: list[int], ends: list[int]) -> None:
        self.parts.append(text)
        self.starts += starts
        self.ends += ends

    def newline(self) -> None:
        at = self.ends[-1] if self.ends else 0
        self.add("\n", [at], [at])
        self.lines += 1

    @property
    def text(self) -> str:
        return "".join(self.parts)


_CELL_SHELL = re.compile(r"^%%(bash|sh|shell|script[ \t]+(ba)?sh)\b")
_ENV_MAGIC = re.compile(r"^([ \t]*%env[ \t]+)[A-Za-z_]\w*=")
_MAGIC = re.compile(r"^[ \t]*(%|!|\w+[ \t]*=[ \t]*!)")


@lru_cache(maxsize=2)  # the launch reader and the Python pass both ask, for the same text
def notebook_sources(raw: str) -> tuple[Virtual, Virtual, list[tuple[int, int]]]:
    """(shell text, Python text, the Python lines [first, last) of each cell) of a notebook's code cells."""
    doc = _decoder().decode(raw)
    cells = doc.get("cells") if isinstance(doc, dict) else None
    shell, python, ranges = Virtual(), Virtual(), []
    for cell in cells if isinstance(cells, list) else ():
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source")
        lines = []  # (text, starts, ends) per line of the cell, without its newline
        for piece in [source] if isinstance(source, str) else source if isinstance(source, list) else []:
            if not isinstance(piece, _PosStr):
                continue
            starts, ends = _char_offsets(raw, piece)
            for m in re.finditer(r"[^\n]*\n|[^\n]+$", piece):
                a = m.start()
                text = m.group().rstrip("\n")
                lines.append((text, starts[a:a + len(text)], ends[a:a + len(text)]))
        first = python.lines
        _split_cell(lines, shell, python)
        ranges.append((first, python.lines))
    return shell, python, ranges


def _split_cell(lines, shell: Virtual, python: Virtual) -> None:
    """Each line of one code cell to the shell text or the Python text (blank in the other)."""
    whole_shell = bool(lines) and _CELL_SHELL.match(lines[0][0].lstrip()) is not None
    continued = False
    for k, (text, starts, ends) in enumerate(lines):
        skip = None  # where the shell text starts on this line; None: not shell
        if whole_shell:
            skip = 0 if k > 0 else None
        elif continued:
            skip = 0
        elif text.lstrip().startswith("!"):
            skip = text.index("!") + 1
        elif (env := _ENV_MAGIC.match(text)) is not None:
            skip = env.end(1)
        if skip is not None:
            shell.add(" " * skip + text[skip:], starts, ends)
            shell.newline()
            continued = not whole_shell and text.rstrip().endswith("\\")
        else:
            continued = False
        blank = skip is not None or whole_shell or _MAGIC.match(text) is not None
        python.add(" " * len(text) if blank else text, starts, ends)
        python.newline()


def python_module(python: Virtual, ranges: list[tuple[int, int]]) -> str:
    """The Python text with the cells that do not parse on their own blanked (same length)."""
    import ast

    lines = python.text.split("\n")
    for first, last in ranges:
        try:
            compile("\n".join(lines[first - 1:last - 1]), "<cell>", "exec",
                    ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            for n in range(first - 1, last - 1):
                lines[n] = " " * len(lines[n])
    return "\n".join(lines)


def map_span(virtual: Virtual, locator, start: int, length: int) -> Span:
    """The span in the file of virtual[start:start+length]."""
    if not virtual.starts:
        return Span(1, 1, 1, 1)
    a = virtual.starts[min(start, len(virtual.starts) - 1)]
    last = start + length - 1
    b = virtual.ends[min(last, len(virtual.ends) - 1)] if length > 0 else a
    return locator.span(a, b - a)


__all__ = ["SHELL_FENCES", "Virtual", "map_span", "markdown_code", "markdown_shell", "notebook_sources", "python_module"]
