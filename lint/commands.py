"""Launch commands outside Python: shell scripts, Dockerfiles, docker compose and Kubernetes YAML,
Markdown shell blocks and notebooks (lint/documents.py), and training configs (lint/training_configs.py).

Each file becomes Launches (launch.py): `vllm serve ...`, `python -m vllm.entrypoints.openai.api_server
...`, `python -m sglang.launch_server ...`, `sglang serve ...` and `docker run ... vllm/vllm-openai ...`
with their options, and VLLM_* variables from `export`/`VAR=... cmd`/`ENV`/`env:`/`environment:`. Shell words are split with
shlex; every word is then found again in the original text, from where the previous one ended, so
a finding points at the line and column of the word in the file (a word whose quoting changed its
text points at the position after the previous word). The configuration rules check the Launches.
"""

from __future__ import annotations

import bisect
import json
import re
import shlex

from errkb.lint.documents import map_span, markdown_code, markdown_shell, notebook_sources, python_module
from errkb.lint.filekinds import file_kind
from errkb.lint.launch import (MODULES, ConfigRule, Launch, Setting, Span, env_launch, framework_launches, launcher,
                               parse_options,
                               shell_value, value_part)
from errkb.lint.pins import container_versions, dockerfile_base, file_versions
from errkb.lint.archs import FileArchs, file_archs
from errkb.lint.rule import LintContext, arch_reports
from errkb.lint.training_configs import MARKERS as CONFIG_MARKERS, config_launches, engine_launches

_OPERATORS = {";", "&&", "||", "|", "&", "(", ")", ";;", "|&"}
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)
_MAX_JOINED = 50  # logical lines joined while looking for a closing quote or parenthesis
# bash arrays of options: NAME=( ... ) / NAME+=( ... ) (after local, declare ...) and "${NAME[@]}"
_ARRAY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\+?=$")
_ARRAY_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}$")
_DECLARE = {"local", "declare", "typeset", "readonly", "export"}


class _Locator:
    """Offsets in the text to 1-based (line, column), and words found again in order."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def span(self, start: int, length: int) -> Span:
        def pos(offset):
            line = bisect.bisect_right(self.starts, offset) - 1
            return line + 1, offset - self.starts[line] + 1
        (l1, c1), (l2, c2) = pos(start), pos(start + max(length, 0))
        return Span(l1, c1, l2, c2)

    def find(self, word: str, cursor: int, limit: int) -> tuple[int, int]:
        """(offset, new cursor) of `word` at or after `cursor` (before `limit`)."""
        at = self.text.find(word, cursor, limit) if word else -1
        if at < 0:
            return cursor, cursor
        return at, at + len(word)


# ------------------------------------------------------------------ shell


def _logical_lines(text: str, start: int, end: int):
    """(offset, line) of each logical line in text[start:end], backslash-newlines joined."""
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        while stop < end and text[pos:stop].endswith("\\"):
            nxt = text.find("\n", stop + 1, end)
            stop = end if nxt < 0 else nxt
        yield pos, stop
        pos = stop + 1


def _shell_words(chunk: str) -> list[str] | None:
    chunk = chunk.replace("\\\n", " ")
    if chunk.endswith("\\") and not chunk.endswith("\\\\"):  # a continuation with no line after it: the
        chunk = chunk[:-1]  # shell runs the command (the twenty-third round's file ends so)
    lex = shlex.shlex(chunk, posix=True, punctuation_chars=";&|()")
    lex.whitespace_split = True
    lex.commenters = "#"
    try:
        return list(lex)
    except ValueError:  # an open quote: the caller joins the next line
        return None


def shell_launches(loc: _Locator, start: int, end: int) -> list[Launch]:
    """Launches in the shell text loc.text[start:end]."""
    out: list[Launch] = []
    arrays: dict[str, list[tuple[str, Span]]] = {}
    strings: dict[str, list[tuple[str, Span]]] = {}
    once = _set_once(loc.text[start:end])
    lines = list(_logical_lines(loc.text, start, end))
    i = 0
    while i < len(lines):
        first, stop = lines[i]
        words = _shell_words(loc.text[first:stop])
        j = i
        while (words is None or _open_array(words)) and j + 1 < len(lines) and j - i < _MAX_JOINED:
            j += 1
            stop = lines[j][1]
            words = _shell_words(loc.text[first:stop])
        i = j + 1
        if not words:
            continue
        located = _with_arrays(_locate(loc, words, first, stop), arrays)
        command: list = []
        for word in [*located, (";", None)]:
            if word[0] in _OPERATORS:
                out.extend(_command_launches(_with_strings(command, strings)))
                _keep_strings(command, strings, once, loc, first, stop)
                command = []
            else:
                command.append(word)
    return out


# a shell variable set once to a string and expanded in a launch: ARGS="--attention-backend fa3" ... $ARGS
_EXPANSION = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")
_SETS = re.compile(r"(?:^|[\s;&|(`])(?:([A-Za-z_][A-Za-z0-9_]*)\+?=|read\s+(?:-\w+\s+)*([A-Za-z_][A-Za-z0-9_]*)"
                         r"|for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b)")


def _set_once(text: str) -> set[str]:
    """The variable names this shell text sets exactly once and in no other way (not by `read`,
    `for NAME in`, `+=`): only such a variable has one value a reader can know without running
    the script (one set in two branches of an `if` has two)."""
    counts: dict[str, int] = {}
    for m in _SETS.finditer(text):
        name = m.group(1) or m.group(2) or m.group(3)
        counts[name] = counts.get(name, 0) + (1 if m.group(1) and "+=" not in m.group(0) else 2)
    return {name for name, n in counts.items() if n == 1}


def _keep_strings(command: list, strings: dict, once: set[str], loc, first: int, stop: int) -> None:
    """Where the command only sets shell variables (`NAME=value`, after export/local/declare),
    the values of those set once, and to no expansion, are kept in `strings`, as the words the
    shell splits them into, each with its span inside the assignment. An assignment before a
    command (`NAME=v cmd`) is that command's environment and is not kept."""
    k = 1 if command and command[0][0] in _DECLARE else 0
    if k >= len(command) or not all(_ASSIGN.match(w) for w, _ in command[k:]):
        return
    for w, _ in command[k:]:
        name, value = _ASSIGN.match(w).groups()
        if name in once and "$" not in value and "`" not in value and (words := _shell_words(value)):
            at, _ = loc.find(name + "=", first, stop)
            strings[name] = _locate(loc, words, at, stop)


def _with_strings(command: list, strings: dict) -> list:
    """The command with each `$NAME` / `${NAME}` of a kept string replaced by its words (as the
    shell splits an unquoted expansion), and one inside a word by a one-word value."""
    if not strings:
        return command

    def one_word(m: re.Match) -> str:
        got = strings.get(m.group(1) or m.group(2))
        return got[0][0] if got and len(got) == 1 else m.group(0)

    out = []
    for word, span in command:
        m = _EXPANSION.fullmatch(word)
        name = m and (m.group(1) or m.group(2))
        if name in strings:
            out.extend(strings[name])
        else:
            out.append((_EXPANSION.sub(one_word, word) if "$" in word else word, span))
    return out


def _open_array(words: list[str]) -> bool:
    """Whether the words start an array assignment whose `)` is on a later line."""
    opened = False
    for k, w in enumerate(words):
        if w == "(" and k and _ARRAY.match(words[k - 1]):
            opened = True
        elif w == ")":
            opened = False
    return opened


def _with_arrays(words: list[tuple[str, Span]], arrays: dict) -> list[tuple[str, Span]]:
    """The words with bash array assignments taken out and kept in `arrays` (in file order:
    `NAME=(...)` sets, `NAME+=(...)` appends, arrays named inside expanded there), and each
    `"${NAME[@]}"` of a known array replaced by its words, which keep the spans where they are
    written: options are often collected in an array and spliced into the launch (the fourteenth
    held-out round's misses)."""
    out, i = [], 0
    while i < len(words):
        m = _ARRAY.match(words[i][0])
        if m and i + 1 < len(words) and words[i + 1][0] == "(":
            end = next((j for j in range(i + 2, len(words)) if words[j][0] == ")"), len(words))
            kept = arrays.get(m.group(1), []) if words[i][0].endswith("+=") else []
            arrays[m.group(1)] = kept + [w for item in words[i + 2:end] for w in _spliced(item, arrays)]
            if out and out[-1][0] in _DECLARE:
                out.pop()
            i = end + 1
            continue
        out.extend(_spliced(words[i], arrays))
        i += 1
    return out


def _spliced(word: tuple[str, Span], arrays: dict) -> list[tuple[str, Span]]:
    """A known array's words for `"${NAME[@]}"` (expanded when it is used, or when it is put
    into another array), else the word itself."""
    ref = _ARRAY_REF.match(word[0])
    return arrays[ref.group(1)] if ref and ref.group(1) in arrays else [word]


def _locate(loc: _Locator, words: list[str], start: int, stop: int) -> list[tuple[str, Span]]:
    """Each word with its span, found in order in loc.text[start:stop]."""
    out, cursor = [], start
    for w in words:
        at, cursor = loc.find(w, cursor, stop)
        out.append((w, loc.span(at, len(w))))
    return out


def _command_launches(words: list[tuple[str, Span]]) -> list[Launch]:
    """Launches of one simple command: `export VAR=...`, `VAR=... cmd ...`, or a launcher."""
    if not words:
        return []
    env: dict[str, Setting] = {}
    k = 1 if words[0][0] == "export" else 0
    while k < len(words) and _ASSIGN.match(words[k][0]):
        name, value = _ASSIGN.match(words[k][0]).groups()
        env[name] = Setting(shell_value(value), value_part(words[k][1], len(name) + 1), name)
        k += 1
    found = launcher([w for w, _ in words[k:]])
    if found:
        launch = parse_options(found[0], words[k:], found[1], found[2])
        launch.env.update(env)
        return [launch]
    launch = _docker_run(words[k:])
    if launch is not None:
        return [launch]
    return [got for name, s in env.items() if (got := env_launch(name, s.value, s.anchor))] \
        + framework_launches(words[k:])




# vLLM's OpenAI server image; its entrypoint is the server (`python3 -m vllm.entrypoints.openai.api_server`
# in vllm's docker/Dockerfile, `vllm serve` in later ones), so what follows the image are its options
_VLLM_IMAGE = re.compile(r"^(?:[\w.-]+(?::\d+)?/)*vllm/vllm-openai(?::[\w.-]+)?(?:@sha256:[0-9a-f]+)?$")
_RUNNERS = ("docker", "podman", "nerdctl")


def _docker_run(words: list[tuple[str, Span]]) -> Launch | None:
    """`docker run [options] vllm/vllm-openai[:TAG] [server options]`: a vLLM launch whose options
    are the words after the image, with the container environment of `-e/--env NAME=value` and the
    version of the image's tag. The image is the first word after `run` that names it (an option's
    value never does); with an `--entrypoint`, see `_entrypoint_launch`."""
    values = [w for w, _ in words]
    start = None
    for i, v in enumerate(values):
        if v.rsplit("/", 1)[-1] in _RUNNERS:
            j = i + 2 if values[i + 1:i + 2] == ["container"] else i + 1
            if values[j:j + 1] == ["run"]:
                start = j + 1
            break
    if start is None:
        return None
    env: dict[str, Setting] = {}
    entry = None
    i = start
    while i < len(values):
        v = values[i]
        if _VLLM_IMAGE.match(v) and entry is None:
            break
        if v == "--entrypoint" and i + 1 < len(values):
            entry, i = values[i + 1], i + 2
            continue
        if v.startswith("--entrypoint="):
            entry, i = v.partition("=")[2], i + 1
            continue
        pair = None
        if v in ("-e", "--env") and i + 1 < len(values):
            i += 1
            pair = words[i]
        elif v.startswith("--env="):
            pair = (v[len("--env="):], value_part(words[i][1], len("--env=")))
        m = _ASSIGN.match(pair[0]) if pair else None
        if m:
            env[m.group(1)] = Setting(shell_value(m.group(2)), value_part(pair[1], len(m.group(1)) + 1), m.group(1))
        i += 1
    else:
        return _entrypoint_launch(entry, words, start, env) if entry else None
    launch = parse_options("vllm", words, i + 1, "docker run vllm/vllm-openai")
    launch.env.update(env)
    launch.versions.update(container_versions(values[i], _where(words[i][1])))
    return launch


def _entrypoint_launch(entry: str, words: list[tuple[str, Span]], start: int, env: dict[str, Setting]) -> Launch | None:
    """`docker run --entrypoint python3 IMAGE -m sglang.launch_server ...` (or `--entrypoint vllm
    IMAGE serve ...`): the entrypoint and the words after the image make the server's command line."""
    base = entry.rsplit("/", 1)[-1]
    values = [w for w, _ in words]
    for p in range(start + 1, len(values)):
        if base.startswith("python") and values[p - 1] == "-m" and values[p] in MODULES:
            image, tool, first, label = values[p - 2], MODULES[values[p]], p + 1, values[p]
        elif base in ("vllm", "sglang") and values[p] == "serve":
            image, tool, first, label = values[p - 1], base, p + 1, f"{base} serve"
        else:
            continue
        launch = parse_options(tool, words, first, f"docker run --entrypoint {entry} ({label})")
        launch.env.update(env)
        launch.versions.update(container_versions(image, _where(words[p][1])))
        return launch
    return None


def _where(anchor) -> str:
    return f"line {anchor.line}" if isinstance(anchor, Span) else "the command"


# ------------------------------------------------------------------ Dockerfile

_INSTRUCTION = re.compile(r"^[ \t]*(RUN|CMD|ENTRYPOINT|ENV)[ \t]+", re.I | re.M)
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def docker_launches(loc: _Locator) -> list[Launch]:
    out: list[Launch] = []
    text = loc.text
    for m in _INSTRUCTION.finditer(text):
        start = m.end()
        stop = next(iter(_logical_lines(text, start, len(text))), (start, start))[1]
        word = m.group(1).upper()
        body = text[start:stop]
        if word == "ENV":
            located = _locate(loc, _shell_words(body) or [], start, stop)
            if len(located) == 2 and "=" not in located[0][0]:  # legacy `ENV NAME value`
                got = env_launch(located[0][0], *located[1])
                out.extend([got] if got else [])
            else:
                out.extend(_command_launches([("export", None), *located]))
        elif body.lstrip().startswith("["):
            out.extend(_json_form(loc, start, stop))
        else:
            out.extend(shell_launches(loc, start, stop))
    return out


def _json_form(loc: _Locator, start: int, stop: int) -> list[Launch]:
    """CMD/ENTRYPOINT/RUN ["exe", "arg", ...]: each string at its place in the file."""
    try:
        argv = json.loads(loc.text[start:stop].replace("\\\n", " "))
    except ValueError:
        return []
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return []
    ranges = [(m.start() + 1, m.end() - 1) for m in _JSON_STRING.finditer(loc.text, start, stop)]
    if len(ranges) != len(argv):
        ranges = [(start, start)] * len(argv)
    return _argv_launches(loc, argv, ranges)


def _argv_launches(loc: _Locator, argv: list[str], ranges: list[tuple[int, int]]) -> list[Launch]:
    """An exec-form argument vector, each word with its range in the file: a launcher, or
    `sh -c SCRIPT` whose script is shell text."""
    for i in range(len(argv) - 2):
        if argv[i].rsplit("/", 1)[-1] in ("sh", "bash") and argv[i + 1] in ("-c", "-lc", "-ec"):
            return shell_launches(loc, *ranges[i + 2])
    found = launcher(argv)
    if not found:
        return []
    words = [(w, loc.span(a, b - a)) for w, (a, b) in zip(argv, ranges)]
    return [parse_options(found[0], words, found[1], found[2])]


# ------------------------------------------------------------------ YAML


def yaml_launches(loc: _Locator) -> list[Launch]:
    import yaml

    out: list[Launch] = []
    for doc in yaml.compose_all(loc.text, Loader=yaml.SafeLoader):
        if doc is not None:
            _walk_yaml(loc, doc, out)
    return out


def _walk_yaml(loc: _Locator, node, out: list[Launch]) -> None:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        for child in node.value:
            _walk_yaml(loc, child, out)
        return
    if not isinstance(node, yaml.MappingNode):
        return
    fields = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
    env = _yaml_env(loc, fields.get("env")) + _yaml_env(loc, fields.get("environment"))
    launches: list[Launch] = []
    parts = [fields[k] for k in ("entrypoint", "command", "args") if k in fields]
    argv, ranges = [], []
    for part in parts:
        if isinstance(part, yaml.ScalarNode):  # compose `command: vllm serve ...`: shell text
            launches.extend(shell_launches(loc, part.start_mark.index, part.end_mark.index))
        elif isinstance(part, yaml.SequenceNode):  # exec form; Kubernetes appends args to command
            for item in part.value:
                if isinstance(item, yaml.ScalarNode):
                    argv.append(item.value)
                    ranges.append(_scalar_range(loc, item))
    launches.extend(_argv_launches(loc, argv, ranges))
    image = _image_of(fields)  # the container's (service's) image decides its version
    if not launches and image is not None and (served := _image_options(loc, fields, image[0])) is not None:
        launches.append(served)
    for launch in launches:
        launch.env.update({name: s for name, s in env})
    if not launches:
        launches = [got for name, s in env if (got := env_launch(name, s.value, s.anchor))]
    if image is not None and launches:
        for package, got in container_versions(*image).items():
            for launch in launches:
                launch.versions.setdefault(package, got)
    out.extend(launches)
    out.extend(config_launches(fields, lambda n: _scalar_span(loc, n)))  # training frameworks' YAML
    out.extend(engine_launches(fields, lambda n: _scalar_span(loc, n)))  # RL frameworks' engine sections
    for key, value in node.value:
        if key.value not in ("env", "environment", "command", "args", "entrypoint"):
            _walk_yaml(loc, value, out)


def _image_options(loc: _Locator, fields: dict, image: str) -> Launch | None:
    """A vllm/vllm-openai container or service that keeps the image's entrypoint (the OpenAI
    server) and passes only options: compose's `command:` without `entrypoint:`, Kubernetes' `args:`
    without `command:`. As `docker run IMAGE OPTIONS`; None for any other image or an override."""
    import yaml

    if not _VLLM_IMAGE.match(image) or "entrypoint" in fields or ("command" in fields and "args" in fields):
        return None
    node = fields.get("args", fields.get("command"))
    if isinstance(node, yaml.ScalarNode):  # compose's string form: split as the shell would
        start, stop = _scalar_range(loc, node)
        words = _shell_words(loc.text[start:stop])
        words = _locate(loc, words, start, stop) if words else None
    elif isinstance(node, yaml.SequenceNode):
        words = [(item.value, _scalar_span(loc, item)) for item in node.value if isinstance(item, yaml.ScalarNode)]
    else:
        return None
    return parse_options("vllm", words, 0, "vllm/vllm-openai container") if words else None


def _image_of(fields: dict) -> tuple[str, str] | None:
    """(image reference, where) of a container or service: `image: REF`, Helm's and operators'
    `image: {repository|name: R, tag: T}`, or `repository:`/`tag:` beside the settings themselves."""
    import yaml

    node = fields.get("image")
    if isinstance(node, yaml.ScalarNode) and node.value:
        return node.value, f"line {node.start_mark.line + 1}"
    parts = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)} \
        if isinstance(node, yaml.MappingNode) else fields
    name = parts.get("repository") or (parts.get("name") if node is not None else None)
    tag = parts.get("tag")
    if not isinstance(name, yaml.ScalarNode) or not name.value:
        return None
    ref = name.value + (f":{tag.value}" if isinstance(tag, yaml.ScalarNode) and tag.value else "")
    return ref, f"line {name.start_mark.line + 1}"


def _scalar_range(loc: _Locator, node) -> tuple[int, int]:
    """Where a scalar's text is in the file: its value when written as is (quotes excluded),
    else the whole node (a block scalar, or a string with escapes)."""
    start = loc.text.find(node.value, node.start_mark.index, node.end_mark.index) if node.value else -1
    if start < 0:
        return node.start_mark.index, node.end_mark.index
    return start, start + len(node.value)


def _scalar_span(loc: _Locator, node) -> Span:
    a, b = _scalar_range(loc, node)
    return loc.span(a, b - a)


def _yaml_env(loc: _Locator, node) -> list[tuple[str, Setting]]:
    """Kubernetes `env: [{name, value}]`, compose `environment: {K: V}` or `[K=V]`."""
    import yaml

    out = []
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and isinstance(v, yaml.ScalarNode):
                out.append((k.value, Setting(shell_value(v.value), _scalar_span(loc, v), k.value)))
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if isinstance(item, yaml.MappingNode):
                f = {k.value: v for k, v in item.value if isinstance(k, yaml.ScalarNode)}
                name, value = f.get("name"), f.get("value")
                if isinstance(name, yaml.ScalarNode) and isinstance(value, yaml.ScalarNode):
                    out.append((name.value, Setting(shell_value(value.value), _scalar_span(loc, value), name.value)))
            elif isinstance(item, yaml.ScalarNode) and _ASSIGN.match(item.value):
                name, value = _ASSIGN.match(item.value).groups()
                span = _scalar_span(loc, item)
                out.append((name, Setting(shell_value(value), value_part(span, len(name) + 1), name)))
    return out


# ------------------------------------------------------------------ linting

_MARKERS = (b"vllm", b"sglang", b"VLLM_")  # a file without any of these launches nothing


class _MappedLocator(_Locator):
    """A locator over text assembled from pieces of a file (a notebook's cells): spans are
    reported where each character is in the file."""

    def __init__(self, virtual, original: str) -> None:
        super().__init__(virtual.text)
        self.virtual = virtual
        self.original = _Locator(original)

    def span(self, start: int, length: int) -> Span:
        return map_span(self.virtual, self.original, start, length)


def launches_of(text: str, kind: str) -> list[Launch]:
    if kind == "markdown":  # fenced shell blocks, prompts and output blanked in place
        masked, blocks = markdown_shell(text)
        loc = _Locator(masked)
        return [launch for a, b in blocks for launch in shell_launches(loc, a, b)]
    if kind == "notebook":
        shell, _, _ = notebook_sources(text)
        return shell_launches(_MappedLocator(shell, text), 0, len(shell.text))
    loc = _Locator(text)
    if kind == "docker":
        return docker_launches(loc)
    if kind == "yaml":
        return yaml_launches(loc)
    return shell_launches(loc, 0, len(text))


def notebook_python(text: str, path: str, rules, archs, texts, versions, pinned) -> list:
    """Findings of a notebook's Python cells (one module, magics blanked), at their places in the file.
    A fix is dropped: its offsets are in the assembled module, not in the notebook."""
    from dataclasses import replace

    from errkb.lint.engine import lint_source

    _, python, ranges = notebook_sources(text)
    module = python_module(python, ranges)
    if not module.strip():
        return []
    got = lint_source(module.encode(), path + ".py", rules, archs, texts, module="notebook", versions=versions,
                      pinned=pinned)
    lines, original = _Locator(module), _Locator(text)
    out = []
    for f in got.findings:
        start = lines.starts[f.line - 1] + f.col - 1
        end = lines.starts[f.end_line - 1] + f.end_col - 1 if f.end_line else start
        span = map_span(python, original, start, max(end - start, 0))
        out.append(replace(f, path=path, line=span.line, col=span.col, end_line=span.end_line,
                           end_col=span.end_col, fix=None))
    return out


def span_fix(rule, rep, texts, text: str, starts: list[int]):
    """The report's fix in character offsets of the file's text, when the rule implements its
    record's fix, the record is `confirmed` (as engine._fix decides for Python), and every edit's
    span still holds the text it replaces (in a notebook, a word the JSON string holds unescaped;
    a word whose quoting changed its text is never edited)."""
    from errkb.lint.launch import SpanEdit
    from errkb.lint.results import Fix

    number = rule.FIXES.get(rep.record)
    record = texts.get(rep.record)
    if rep.fix is None or number is None or record is None or not record.confirmed or text.startswith("\ufeff"):
        return None
    edits = []
    for e in rep.fix.edits:
        if not isinstance(e, SpanEdit):
            return None
        a = starts[e.span.line - 1] + e.span.col - 1
        b = starts[e.span.end_line - 1] + e.span.end_col - 1
        if text[a:b] != e.old:
            return None
        edits.append((a, b, e.text))
    return Fix(rep.fix.title, rep.fix.safe, number, tuple(edits))


def lint_commands(source: bytes, path: str, rules, archs: tuple[str, ...] | None, texts, versions=None,
                  report_unused=False, pinned=None):
    """Findings for one shell script, Dockerfile, YAML, Markdown file or notebook (never raises on
    bad input). `archs`: the configured ones, which lint/archs.py file_archs turns into those this
    file is judged for; `pinned`: the project's pinned versions (lint/pins.py), below the file's own."""
    from errkb.lint.engine import assumed_note, render, suppressions
    from errkb.lint.results import FileResult, Finding, unused_suppressions

    result = FileResult(path)
    kind = file_kind(path) or "shell"
    if kind != "notebook" and not any(m in source for m in _MARKERS + (CONFIG_MARKERS if kind == "yaml" else ())):
        return result
    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError:
        result.skipped = "cannot decode: not UTF-8"
        return result
    try:
        launches = launches_of(text, kind)
    except Exception as exc:  # malformed YAML and the like: say so, lint the other files
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        result.skipped = f"cannot read as {kind}{where}: {type(exc).__name__}"
        return result
    # a Markdown file's pins count only inside its fenced blocks, not in its prose
    own = file_versions(markdown_code(text) if kind == "markdown" else text) if launches or kind == "notebook" else {}
    if kind == "docker" and launches:  # an unversioned vLLM/SGLang base image: unknown, not the project's pin
        own = {**dockerfile_base(text), **own}
    for launch in launches:
        for package, got in own.items():
            launch.versions.setdefault(package, got)
    # (the GPU names are a scan of the whole text: only where something will be judged)
    judged = file_archs(source, archs) if launches or kind == "notebook" else FileArchs((), False)
    ctx = LintContext(None, judged.archs, dict(versions or {}), dict(pinned or {}), judged.named)
    sup = suppressions(source)
    starts = _Locator(text).starts
    used: dict[int, set[str]] = {}
    findings = []
    for rule in rules:
        if not isinstance(rule, ConfigRule):
            continue
        for launch in launches:
            if launch.tool != rule.TOOL:
                continue
            for rep in arch_reports(rule, ctx, lambda c: rule.check_launch(launch, c)):
                span = rep.span
                codes = sup.get(span.line, ())
                if span.line in sup and (codes is None or rule.CODE in codes):
                    used.setdefault(span.line, set()).add(rule.CODE)
                    continue
                findings.append(Finding(path, span.line, span.col, rule.CODE, rule.NAME, rep.record,
                                        render(rep, texts, assumed_note(rule, judged)), span.end_line, span.end_col,
                                        span_fix(rule, rep, texts, text, starts)))
    if kind == "notebook":
        findings += notebook_python(text, path, rules, None if judged.assumed else judged.archs, texts, versions,
                                    {**(pinned or {}), **own})
    elif report_unused:  # (in a notebook a comment may belong to a Python cell: not reported there)
        findings += unused_suppressions(path, sup, used, "on this line")
    result.findings = sorted(set(findings))
    return result
