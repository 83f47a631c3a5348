"""Stage two, between the byte prefilter and libcst: which rules can report in this module?

A file that passes the byte prefilter (prefilter.py) is parsed by CPython's own parser anyway
(engine.py does it to guard libcst against deep nesting), and that tree answers, far more
cheaply than a libcst parse, which rules could report at all. The answer errs one way only: a
rule left out cannot report here, so the findings are those of running every rule. Why:

- Each rule is asked only when the file holds one of its own prefilter groups: the prefilter
  passes a file for any rule's words, and a rule cannot report without its own.
- A rule that keeps `Rule.run` (a kernel rule) reports only at a call whose function resolves
  to its TARGETS. analysis.ModuleIndex.resolve builds every name from an import's qualified
  name and attribute names, so first some import must bind a prefix of a target with the rest
  of its dotted parts in the source (cheap: import statements only); then some call must have
  a function that pyfacts.Resolver (a superset of resolve) maps to a target.
- A configuration rule (`ConfigRule.run`) reports only on a Launch of its TOOL from
  launch_python: a call to an engine constructor (vLLM, SGLang) or a transformers loader (as
  above), `.set_attn_implementation(...)` in a module importing transformers, a VLLM_* string
  or keyword (vLLM's environment), or a string, list or tuple that starts a server
  (pyfacts.ModuleFacts.literal_tools). The calls that set up a mixed precision EKB802 reads
  (accelerate's Accelerator, transformers'/TRL's training arguments, DeepSpeed) are kept with
  the Launches' calls, though they make no Launch.
- Any other rule (its own `run`, as EKB401) is not screened.

The calls that may reach a kernel rule's targets are also where narrow.py keeps code.
"""

from __future__ import annotations

import ast
import functools
from typing import Callable, Iterable

from errkb.lint.analysis import relative_base
from errkb.lint.launch import ConfigRule
from errkb.lint.launch_python import MIXED_PRECISION_FAMILIES, SGLANG_CALLS, VLLM_CALLS, mixed_precision_kind
from errkb.lint.prefilter import groups_found, tokens_of
from errkb.lint.pyfacts import ModuleFacts, Resolver
from errkb.lint.rule import Rule

_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")
_TRANSFORMERS_LOADERS = ("from_pretrained", "from_config")  # as launch_python reads them
_TOOLS = ("vllm", "sglang", "transformers")


def imports(tree: ast.Module, module: str, is_package: bool) -> set[str]:
    """The qualified names the module's import statements bind (as analysis binds them), read
    from statements only: cheaper than pyfacts' walk over every node."""
    out: set[str] = set()
    stack: list = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                out.add(alias.name if alias.asname else alias.name.split(".")[0])
            continue
        if isinstance(node, ast.ImportFrom):
            mod = node.module
            if node.level:
                mod = relative_base(module, is_package, node.level, mod)
            if mod is not None:
                out.update(f"{mod}.{alias.name}" for alias in node.names if alias.name != "*")
            continue
        for field in _STATEMENT_LISTS:
            children = getattr(node, field, None)
            if children:
                stack.extend(children)
    return out


def reachable(targets: Iterable[str], bound: set[str], source: bytes) -> bool:
    """Some target is an imported name followed by attribute names that occur in the source."""
    for target in targets:
        parts = target.split(".")
        for k in range(len(parts), 0, -1):
            if ".".join(parts[:k]) in bound:
                if all(p.encode() in source for p in parts[k:]):
                    return True
    return False


def _kind(rule: Rule) -> str | None:
    run = type(rule).run
    if run is Rule.run:
        return "kernel"
    if run is ConfigRule.run and rule.TOOL in _TOOLS:
        return "config"
    return None


def candidates(tree: ast.Module, source: bytes, rules: Iterable[Rule], module: str, is_package: bool,
               facts: Callable[[], ModuleFacts] | None = None) -> tuple[list[Rule], set, list]:
    """(the rules of `rules` that may report in this module, in their order; the regions
    (pyfacts) libcst must see for them; the calls they may report at or build a Launch from,
    with their regions). `facts` gives the module's ModuleFacts (one walk over every node),
    asked for only when needed."""
    if facts is None:
        facts = functools.cache(lambda: ModuleFacts(tree, module, is_package))
    rules = list(rules)
    found = groups_found(source, tokens_of(rule.PREFILTER for rule in rules))
    bound: set[str] | None = None
    maybe = []
    for rule in rules:
        if found.isdisjoint(rule.PREFILTER):
            continue  # the file passed the prefilter for another rule's words
        if _kind(rule) == "kernel":
            if bound is None:
                bound = imports(tree, module, is_package)
            if not reachable(rule.TARGETS, bound, source):
                continue
        maybe.append(rule)
    kinds = {_kind(rule) for rule in maybe}
    if not kinds & {"kernel", "config"}:
        return maybe, set(), []
    mod = facts()
    kernel_targets = {t for rule in maybe if _kind(rule) == "kernel" for t in rule.TARGETS}
    config = "config" in kinds
    resolve = Resolver(mod, kernel_targets | (VLLM_CALLS | SGLANG_CALLS if config else set()),
                       MIXED_PRECISION_FAMILIES if config else ())
    sites: dict[str, list] = {}  # kernel rule code -> its calls, with their regions
    tools = set(mod.literal_tools)
    transformers_imported = config and any(q.split(".")[0] == "transformers" for q in mod.bound)
    launch_sites: list = []
    for call, region in mod.calls:
        got = resolve(call.func)
        if got:
            for rule in maybe:
                if _kind(rule) == "kernel" and not got.isdisjoint(rule.TARGETS):
                    sites.setdefault(rule.CODE, []).append((call, region))
        if config and (found_tools := _launch_tools(call, got, transformers_imported)):
            tools |= found_tools
            launch_sites.append((call, region))
        elif config and any(mixed_precision_kind(q) for q in got):  # what EKB802 asks (no tool of its own)
            launch_sites.append((call, region))
    out, calls, regions = [], [], set()
    for rule in maybe:
        kind = _kind(rule)
        if kind == "kernel":
            if rule.CODE not in sites:
                continue
            calls += sites[rule.CODE]
        elif kind == "config":
            if rule.TOOL not in tools:
                continue
            # the calls Launches come from, the literals, and every import (the transformers
            # rules ask which scopes import what)
            calls += launch_sites
            regions |= mod.launch_regions | mod.import_regions
        out.append(rule)
    return out, regions | {region for _, region in calls}, calls


def narrowable(rules: Iterable[Rule]) -> bool:
    """Whether libcst may see only the regions candidates() returns (narrow.py): kernel and
    configuration rules read nothing else; a rule with its own run (EKB401) may."""
    return all(_kind(rule) is not None for rule in rules)


def _launch_tools(call: ast.Call, got: set[str], transformers_imported: bool) -> set[str]:
    """The tools of the Launch launch_python may build from this call."""
    out = set()
    if not got.isdisjoint(VLLM_CALLS):
        out.add("vllm")
    if not got.isdisjoint(SGLANG_CALLS):
        out.add("sglang")
    if any(q.startswith("transformers.") and q.rsplit(".", 1)[-1] in _TRANSFORMERS_LOADERS for q in got) or (
            transformers_imported and type(call.func) is ast.Attribute
            and call.func.attr == "set_attn_implementation"):
        out.add("transformers")
    return out


def rules_that_may_report(tree: ast.Module, source: bytes, rules: Iterable[Rule], module: str,
                          is_package: bool) -> list[Rule]:
    """The rules of `rules` that may report in this module (see candidates)."""
    return candidates(tree, source, rules, module, is_package)[0]


__all__ = ["candidates", "imports", "narrowable", "reachable", "rules_that_may_report"]
