"""One launch configuration of vLLM, SGLang or transformers, however it was written.

Users rarely call kernels; they write `vllm.LLM(attention_backend=...)`, `sglang.Engine(...)`,
`from_pretrained(..., attn_implementation=...)`, `vllm serve ... --attention-backend X` in a
script, a Dockerfile or a Kubernetes manifest, or `VLLM_ATTENTION_BACKEND=...` in an environment.
Every form becomes a `Launch`: the tool, its settings under one canonical name each
(`attention_backend`, `kv_cache_dtype`, `attention_config.backend`, ...), and the environment
variables set with it. The configuration rules (lint/rules_config_*.py) check Launches only, so one
rule covers Python, shell, Dockerfile and YAML alike.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from errkb.lint.analysis import UNKNOWN
from errkb.lint.rule import Report, Rule


@dataclass
class Setting:
    value: object  # str, int, float, bool, None or UNKNOWN
    anchor: object  # a libcst node (Python) or a Span (other files): where to report
    spelled: str  # as the user wrote the name: '--attention-backend', 'attention_backend', 'VLLM_...'

    @property
    def text(self) -> str | None:
        return self.value if isinstance(self.value, str) else None


@dataclass(frozen=True)
class Span:
    line: int  # 1-based
    col: int  # 1-based
    end_line: int
    end_col: int


@dataclass
class Launch:
    tool: str  # vllm | sglang | transformers
    form: str  # python (a call) | cli (a command line) | env (environment only)
    settings: dict[str, Setting] = field(default_factory=dict)
    env: dict[str, Setting] = field(default_factory=dict)
    entry: str = ""  # how a command line starts the server: 'sglang serve', 'sglang.launch_server', ...
    # target versions the launch's own file or container names: package -> (version, where read)
    versions: dict[str, tuple[str, str]] = field(default_factory=dict)

    def get(self, key: str) -> Setting | None:
        return self.settings.get(key)

    def texts(self, *keys: str) -> list[tuple[str, Setting]]:
        """(key, setting) for those of `keys` that are set to a visible string."""
        return [(k, self.settings[k]) for k in keys if k in self.settings and self.settings[k].text is not None]


# ------------------------------------------------------------------ command lines

# `python -m MODULE` launchers and the tool each starts
MODULES = {
    "vllm.entrypoints.openai.api_server": "vllm",
    "vllm.entrypoints.api_server": "vllm",
    "vllm.entrypoints.cli.main": "vllm",
    "sglang.launch_server": "sglang",
    # SGLang's one-batch benchmark parses the server's own options (ServerArgs.add_cli_args) and
    # builds the same attention backends in-process: sglang.bench_one_batch in 0.5.6-0.5.22 (a
    # shim from 0.5.20), sglang.benchmark.one_batch from 0.5.20 (read in each release's wheel)
    "sglang.bench_one_batch": "sglang",
    "sglang.benchmark.one_batch": "sglang",
}


def launcher(values: list[str]) -> tuple[str, int, str] | None:
    """(tool, index of the first option, entry) when `values` starts a vLLM or SGLang server:
    `vllm serve`, `sglang serve`, `python[3] -m MODULE` (a path to python, an interpreter held in
    a variable as `"$PYTHON_BIN" -m MODULE`, or an `exec`/`env` prefix is fine); None otherwise."""
    for i, word in enumerate(values):
        base = word.rsplit("/", 1)[-1]
        if base in ("vllm", "sglang") and i + 1 < len(values) and values[i + 1] == "serve":
            return base, i + 2, f"{base} serve"
        if (base.startswith("python") or word.startswith("$")) and i + 2 < len(values) and values[i + 1] == "-m" \
                and values[i + 2] in MODULES:
            return MODULES[values[i + 2]], i + 3, values[i + 2]
    return None


def _canonical(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def parse_options(tool: str, words: list[tuple[object, object]], start: int, entry: str = "") -> Launch:
    """Settings of one command line from its words (value, anchor): `--name value`,
    `--name=value`, bare `--flag` (True); a JSON `--attention-config '{"backend": ...}'` is opened."""
    launch = Launch(tool, "cli", entry=entry)
    i = start
    while i < len(words):
        value, anchor = words[i]
        i += 1
        if not isinstance(value, str) or not value.startswith("--") or value == "--":
            continue
        if "=" in value:
            name, _, arg = value.partition("=")
            launch.settings[_canonical(name)] = Setting(shell_value(arg), value_part(anchor, len(name) + 1), name)
            continue
        nxt = words[i][0] if i < len(words) else None
        if isinstance(nxt, str) and nxt.startswith("-") and not _is_number(nxt):
            launch.settings[_canonical(value)] = Setting(True, anchor, value)
        elif i < len(words):
            launch.settings[_canonical(value)] = Setting(shell_value(nxt), words[i][1], value)
            i += 1
        else:
            launch.settings[_canonical(value)] = Setting(True, anchor, value)
    config = launch.settings.get("attention_config")
    if config is not None and isinstance(config.value, str):
        try:
            parsed = json.loads(config.value)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("backend"), str):
            launch.settings["attention_config.backend"] = Setting(parsed["backend"], config.anchor,
                                                                  "--attention-config")
    return launch


def value_part(anchor: object, skip: int) -> object:
    """The span of the value in a NAME=value word (a node or multi-line span stays whole)."""
    if isinstance(anchor, Span) and anchor.line == anchor.end_line:
        return Span(anchor.line, anchor.col + skip, anchor.end_line, anchor.end_col)
    return anchor


# a placeholder in documentation or a template: <name>, {name}, {a|b}, [NAME], ...
_PLACEHOLDER = re.compile(r"[<>]|\{[^\"'{}]*\}|^\{(?![\"'])|\.\.\.|^\[.*\]$")


def shell_value(value: object) -> object:
    """A command-line or environment value as the program will see it: UNKNOWN when it is
    expanded at run time (`$X`, `${X:-default}`, `$(cmd)`, backquotes, Kubernetes' `$(VAR)`) or is a
    placeholder (`<backend>`, `{backend}`, `[BACKEND]`, `...`: README and str.format templates)."""
    if isinstance(value, str) and ("$" in value or "`" in value or _PLACEHOLDER.search(value)):
        return UNKNOWN
    return value


def _is_number(word: str) -> bool:
    try:
        float(word)
        return True
    except ValueError:
        return False


def env_launch(name: str, value: object, anchor: object) -> Launch | None:
    """A Launch for one environment variable the rules know (VLLM_*), or None."""
    if not name.startswith("VLLM_"):
        return None
    return Launch("vllm", "env", env={name: Setting(shell_value(value), anchor, name)})


# RL and training frameworks hand SGLang's and vLLM's engine arguments on through options of their
# own: Hydra/OmegaConf overrides (verl's `actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend=fa3`,
# AReaL's `actor.sglang.attention_backend=fa3`) and prefixed flags (slime's `--sglang-attention-backend fa3`);
# the twenty-second held-out round met the first two, the twenty-third the last in Python strings
_OVERRIDE = re.compile(r"^[+~]{0,2}(?:[A-Za-z_][\w-]*\.)*(sglang|vllm)\.([a-z][a-z0-9_]*)=(.*)$", re.S)
_PREFIXED = re.compile(r"^--(sglang)-([a-z][a-z0-9-]*)(?:=(.*))?$", re.S)


def framework_launches(words: list[tuple[object, object]]) -> list[Launch]:
    """One Launch per tool (form `framework`) of the engine arguments a framework's command line,
    argv list or option string passes on, keyed as the engine names them."""
    by_tool: dict[str, Launch] = {}
    i = 0
    while i < len(words):
        word, span = words[i]
        i += 1
        if not isinstance(word, str):
            continue
        if m := _OVERRIDE.match(word):
            tool, key, value = m.groups()
            anchor = value_part(span, len(word) - len(value))
        elif m := _PREFIXED.match(word):
            tool, key, value = m.group(1), m.group(2).replace("-", "_"), m.group(3)
            anchor = value_part(span, len(word) - len(value)) if value is not None else None
            if value is None:
                if i >= len(words) or (isinstance(words[i][0], str) and words[i][0].startswith("-")):
                    continue
                value, anchor = words[i]
                i += 1
        else:
            continue
        launch = by_tool.setdefault(tool, Launch(tool, "framework"))
        launch.settings[key] = Setting(shell_value(value), anchor, word.split("=", 1)[0])
    return list(by_tool.values())


# where a text may hold such a word (a superset of what framework_launches reads from its words):
# lint/pyfacts.py asks it before libcst, on the text without shell quoting
_FRAMEWORK_WORD = re.compile(r"(?<![\w-])(?:(sglang|vllm)\.[a-z][a-z0-9_]*=|--(sglang)-[a-z])")


def framework_tools(text: str) -> set[str]:
    """The tools a framework's pass-through in this text may set (see framework_launches)."""
    return {m.group(1) or m.group(2) for m in _FRAMEWORK_WORD.finditer(text)}


# ------------------------------------------------------------------ rules


@dataclass(frozen=True)
class SpanEdit:
    """An edit outside Python: the text `old` at `span` becomes `text` (commands.py checks that
    the file still holds `old` there before offering it)."""

    span: Span
    old: str
    text: str


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.\-]+")


def value_fix(setting: Setting, new: str, title: str, safe: bool = True):
    """A fix that writes `new` in place of a setting's value, when the value is written as it is
    read where it is reported: a word or scalar of a command file, a string literal of a call
    (not a name bound elsewhere, whose other uses an edit would change). None otherwise."""
    from errkb.lint.edits import RuleFix, replace

    if setting.text is None or not _PLAIN_NAME.fullmatch(new) or not _PLAIN_NAME.fullmatch(setting.text):
        return None
    anchor = setting.anchor
    if isinstance(anchor, Span):
        return RuleFix(title, safe, (SpanEdit(anchor, setting.text, new),))
    import libcst as cst

    node = anchor.value if isinstance(anchor, cst.Arg) else anchor
    if isinstance(node, cst.SimpleString) and node.raw_value == setting.text:
        return RuleFix(title, safe, (replace(node, f"{node.prefix}{node.quote}{new}{node.quote}"),))
    return None


class ConfigRule(Rule):
    """Base of the configuration rules: `check_launch` sees every Launch of its TOOL, from Python
    (see launch_python.py) and from scripts, Dockerfiles and YAML (see commands.py)."""

    TOOL: str = ""

    def run(self, ctx) -> Iterator[Report]:
        from errkb.lint.launch_python import python_launches

        for launch in python_launches(ctx.index):
            if launch.tool == self.TOOL:
                yield from self.check_launch(launch, ctx)

    def check_launch(self, launch: Launch, ctx) -> Iterable[Report]:
        return ()

    def at(self, setting: Setting, record: str | None = None, hint: str | None = None,
           text: str | None = None, **params) -> Report:
        """A report at a setting (a libcst node, or a Span outside Python)."""
        rep = self.report(setting.anchor if not isinstance(setting.anchor, Span) else None,
                          record, hint, text, **params)
        rep.span = setting.anchor if isinstance(setting.anchor, Span) else None
        return rep


def target_version(ctx, package: str, launch: Launch | None = None) -> str | None:
    """The release a launch is checked against (lint/pins.py has the precedence): the configured
    target version, else the version of the launch's own image or file, else the project's pin."""
    return _target(ctx, package, launch)[0]


def _target(ctx, package: str, launch: Launch | None) -> tuple[str | None, str]:
    explicit = (getattr(ctx, "versions", None) or {}).get(package)
    if explicit:
        return explicit, ""
    if launch is not None and package in launch.versions:  # its image or file decides, known or not
        got = launch.versions[package]
    else:
        got = (getattr(ctx, "pinned", None) or {}).get(package)
    return (got[0], f" [target {package} {got[0]}: {got[1]}]") if got and got[0] else (None, "")


def target_release(ctx, package: str, launch: Launch | None = None):
    """(the release read that stands for the target version, or None; a note for the hint that says
    where the version came from when it was not configured)."""
    from errkb.lint import choices

    version, note = _target(ctx, package, launch)
    return choices.release_for(package, version), note


__all__ = ["ConfigRule", "Launch", "Setting", "Span", "UNKNOWN", "env_launch", "launcher", "parse_options",
           "target_release", "target_version"]
