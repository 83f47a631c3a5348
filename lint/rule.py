"""The rule base class and the registry.

A rule is one small class (see lint/rules_*.py): a docstring saying what it catches, the errkb
record(s) it prevents, the call targets it looks at, and VALID / INVALID examples that are both
its tests and its documentation. `check` yields `Report`s; the engine turns them into findings
whose message is the record's upstream wording.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar, Iterable, Iterator

import libcst as cst

from errkb.lint.analysis import CallArgs, CallSite, ModuleIndex
from errkb.lint.targets import positional_params

from errkb.lint.archs import ALL_ARCHS, DEFAULT_ARCHS  # noqa: F401 (re-exported)
from errkb.lint.edits import RuleFix


def arch_major(arch: str) -> int:
    return int(arch[2:]) // 10


@dataclass(frozen=True)
class Example:
    """A code snippet; INVALID ones say how many findings they give (and for which archs)."""

    code: str
    archs: tuple[str, ...] = DEFAULT_ARCHS
    findings: int = 1
    path: str = "example.py"  # the file type it is linted as (a .sh, Dockerfile or .yaml for commands)
    versions: tuple[tuple[str, str], ...] = ()  # target package versions, e.g. (("vllm", "0.11.0"),)
    fixed: str | None = None  # the code after its autofixes (safe and unsafe): tests apply and compare


@dataclass
class Report:
    node: cst.CSTNode
    record: str
    params: dict = field(default_factory=dict)
    hint: str = ""
    text: str | None = None  # upstream's exact words when they differ from the record's message
    span: object = None  # outside Python (commands.py): a launch.Span instead of a node
    fix: "RuleFix | None" = None  # offered only when FIXES names the record and it is confirmed


@dataclass
class LintContext:
    index: ModuleIndex | None
    archs: tuple[str, ...]
    versions: dict[str, str] = field(default_factory=dict)  # target releases, e.g. {"vllm": "0.11.0"}
    pinned: dict[str, tuple[str, str]] = field(default_factory=dict)  # the project's pins (lint/pins.py)
    each_arch: bool = False  # the archs are the GPUs the file names (lint/archs.py file_archs)


def arch_reports(rule: "Rule", ctx: LintContext, run) -> list[Report]:
    """`run(ctx)`'s reports, where the file names GPUs of several archs only those an
    arch-dependent rule makes on each of them alone: a guide that names an H100 and a B200 and
    puts fa3 on the H100 is not told that fa3 fails on the B200 (the twelfth held-out round)."""
    got = list(run(ctx))
    if got and ctx.each_arch and rule.ARCH_DEPENDENT and len(ctx.archs) > 1:
        for arch in ctx.archs:
            held = {_where(r) for r in run(replace(ctx, archs=(arch,)))}
            got = [r for r in got if _where(r) in held]
    return got


def _where(rep: Report) -> tuple:
    return rep.record, id(rep.node) if rep.span is None else (rep.span.line, rep.span.col)


class Rule:
    """Base class; see the rules_*.py modules (one small class per rule)."""

    CODE: ClassVar[str]
    NAME: ClassVar[str]
    RECORDS: ClassVar[tuple[str, ...]]
    TARGETS: ClassVar[frozenset[str]] = frozenset()
    # the byte-level prefilter: groups of tokens; a file that holds no whole group cannot match
    PREFILTER: ClassVar[tuple[tuple[bytes, ...], ...]] = ()
    HINT: ClassVar[str] = ""  # the fix, one sentence
    # record id -> the record fix (1-based) this rule's autofix implements (lint/edits.py)
    FIXES: ClassVar[dict[str, int]] = {}
    ARCH_DEPENDENT: ClassVar[bool] = False
    VALID: ClassVar[list] = []
    INVALID: ClassVar[list] = []

    def run(self, ctx: LintContext) -> Iterator[Report]:
        for site in ctx.index.calls:
            targets = ctx.index.targets(site)
            if targets and targets <= self.TARGETS:
                args = ctx.index.bind_args(site, positional_params(targets))
                yield from self.check(site, targets, args, ctx)

    def check(self, site: CallSite, targets: frozenset[str], args: CallArgs,
              ctx: LintContext) -> Iterable[Report]:
        return ()

    def report(self, node: cst.CSTNode, record: str | None = None, hint: str | None = None,
               text: str | None = None, fix: "RuleFix | None" = None, **params) -> Report:
        return Report(node, record or self.RECORDS[0], params, self.HINT if hint is None else hint, text, fix=fix)


REGISTRY: dict[str, type[Rule]] = {}


def register(cls: type[Rule]) -> type[Rule]:
    assert cls.CODE not in REGISTRY, cls.CODE
    REGISTRY[cls.CODE] = cls
    return cls


def all_rules() -> dict[str, type[Rule]]:
    from errkb.lint import rules_fa2, rules_fa4, rules_flashinfer, rules_sdpa, rules_sglang  # noqa: F401
    from errkb.lint import rules_config_sglang, rules_config_transformers, rules_config_vllm  # noqa: F401

    return dict(sorted(REGISTRY.items()))
