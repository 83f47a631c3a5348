"""Case discovery and requirements, read without importing case code.

A case file is `verification/cases/<area>/<record-id>.py`. Its steps are top-level functions
(or names bound to a shared helper's function, `fix_2 = b.compile_recipe_fix`)
named `reproduce`, `fix_<n>` (or `fix_<name>`), `control` and `entry_<kind>`; each becomes a case
with id `<record-id>:<step>` (`fix_1` -> `fix-1`, `entry_sglang_server` -> `entry-sglang-server`).
An `entry_<kind>` step goes through a user's entry point (ENTRY_KINDS) and records what the user
sees first there; it is not part of the record's claim. Module-level literals declare what it needs:

    BACKEND = "fa4"                       # default: the record's first backend
    REQUIRES = {"cuda": True, "arch": "sm90", "packages": ["flash_attn.cute"]}
    STEP_REQUIRES = {"fix_2": {"arch": "sm100+"}}   # over REQUIRES for that step (packages add up)
    TIMEOUT = 300                         # seconds per step (default: the runner's --timeout)

They are parsed with `ast.literal_eval`, so the runner never imports case code; the worker
checks them before it imports the case, and a case whose needs are not met is `skipped` with
the reason.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

STEP_ORDER = {"reproduce": 0, "fix": 1, "control": 2, "entry": 3}
_STEP_RE = re.compile(r"^(reproduce|control|fix_[A-Za-z0-9_]+|entry_[a-z0-9_]+)$")
# The entry points an `entry_<kind>` step can go through (the function name spells the kind with
# underscores): how users reach a record through a server, an engine or model loading, rather
# than by calling the function that raises it. errkb.model.EntryKind lists the same names.
ENTRY_KINDS = ("sglang-server", "vllm-engine", "transformers-model")
ENTRY_PREFIX = "entry-"
_ARCH_RE = re.compile(r"^sm(\d+)$")
REQUIREMENT_KEYS = {"cuda", "arch", "packages", "torch", "cpu"}


class CaseError(ValueError):
    """A case file that cannot be used."""


@dataclass(frozen=True)
class Case:
    id: str  # <record-id>:<step-id>
    record: str
    step: str  # function name in the file
    backend: str
    file: str
    requires: dict = field(default_factory=dict, hash=False, compare=False)
    timeout: float | None = None
    sha: str = ""  # of the case file, so an edited case is re-run on resume

    def to_json(self) -> dict:
        return {"id": self.id, "record": self.record, "step": self.step, "backend": self.backend,
                "file": self.file, "requires": self.requires, "timeout": self.timeout, "sha": self.sha}


def step_id(function: str) -> str:
    return function.replace("_", "-")


def entry_kind(case_id_or_step: str) -> str | None:
    """The entry-point kind of an `entry-<kind>` step (a case id or a step id), else None."""
    step = case_id_or_step.rsplit(":", 1)[-1].replace("_", "-")
    return step[len(ENTRY_PREFIX):] if step.startswith(ENTRY_PREFIX) else None


def _step_key(function: str) -> tuple:
    kind = function.split("_", 1)[0]
    rest = function[len(kind):].lstrip("_")
    return (STEP_ORDER[kind], int(rest) if rest.isdigit() else 10**6, rest)


def _literals(tree: ast.Module) -> dict:
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in {"BACKEND", "REQUIRES", "STEP_REQUIRES", "TIMEOUT", "RECORD"}:
                try:
                    out[name] = ast.literal_eval(node.value)
                except ValueError as exc:
                    raise CaseError(f"{name} must be a literal: {exc}") from None
    return out


def _step_needs(base: dict, step: dict) -> dict:
    """A step needs what its file needs, with its own cuda/arch/torch/cpu in place of the file's
    and its own packages added to the file's."""
    packages = list(dict.fromkeys([*base.get("packages", []), *step.get("packages", [])]))
    merged = {**base, **step}
    if packages:
        merged["packages"] = packages
    return merged


def check_requires(req: dict, where: str) -> dict:
    unknown = set(req) - REQUIREMENT_KEYS
    if unknown:
        raise CaseError(f"{where}: unknown requirement(s) {sorted(unknown)}")
    if "arch" in req:
        parse_arch(req["arch"])
    return req


def _step_names(tree: ast.Module) -> list[str]:
    """Top-level functions, and names bound to a helper's function (`fix_2 = b.compile_recipe_fix`):
    records that give the same fix share one step instead of writing it again in each case file."""
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append(node.name)
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
              and isinstance(node.value, (ast.Name, ast.Attribute))):
            names.append(node.targets[0].id)
    return names


def load_case_file(path: Path, records: dict[str, dict]) -> list[Case]:
    text = path.read_text()
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise CaseError(f"{path}: {exc}") from None
    lits = _literals(tree)
    record_id = lits.get("RECORD", path.stem)
    record = records.get(record_id)
    if record is None:
        raise CaseError(f"{path}: no record {record_id!r}")
    backend = lits.get("BACKEND") or record["backends"][0]
    base = check_requires(dict(lits.get("REQUIRES", {})), str(path))
    per_step = lits.get("STEP_REQUIRES", {})
    sha = hashlib.sha256(text.encode()).hexdigest()[:16]
    functions = [name for name in _step_names(tree) if _STEP_RE.match(name)]
    if "reproduce" not in functions:
        raise CaseError(f"{path}: no reproduce step")
    for name in per_step:
        if name not in functions:
            raise CaseError(f"{path}: STEP_REQUIRES names unknown step {name!r}")
    for name in functions:
        kind = entry_kind(name)
        if kind is not None and kind not in ENTRY_KINDS:
            raise CaseError(f"{path}: {name} names no known entry point (one of {', '.join(ENTRY_KINDS)})")
    cases = []
    for fn in sorted(functions, key=_step_key):
        req = _step_needs(base, check_requires(dict(per_step.get(fn, {})), f"{path}:{fn}"))
        cases.append(Case(id=f"{record_id}:{step_id(fn)}", record=record_id, step=fn, backend=backend,
                          file=str(path), requires=req, timeout=lits.get("TIMEOUT"), sha=sha))
    return cases


def discover(cases_dir: Path, records: dict[str, dict]) -> list[Case]:
    """Every case under cases_dir, in a stable order (by backend, record, step)."""
    cases: list[Case] = []
    for path in sorted(Path(cases_dir).glob("*/*.py")):
        if path.name.startswith("_"):
            continue
        cases.extend(load_case_file(path, records))
    seen = set()
    for c in cases:
        if c.id in seen:
            raise CaseError(f"duplicate case id {c.id}")
        seen.add(c.id)
    return cases


# ---------------------------------------------------------------- architectures


def _cc(token: str) -> tuple[int, int]:
    m = _ARCH_RE.match(token.strip())
    if not m:
        raise CaseError(f"bad arch {token!r}: use smXY, smXY+ or smXY-smZW")
    digits = m.group(1)
    return int(digits[:-1]), int(digits[-1])


def parse_arch(spec) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """'sm90' -> 9.0 only; 'sm100+' -> 10.0 and newer; 'sm80-sm90' -> 8.0 to 9.x inclusive."""
    items = [spec] if isinstance(spec, str) else list(spec)
    ranges = []
    for item in items:
        item = item.strip()
        if item.endswith("+"):
            ranges.append((_cc(item[:-1]), (10**6, 9)))
        elif "-" in item:
            lo, hi = item.split("-", 1)
            h = _cc(hi)
            ranges.append((_cc(lo), (h[0], 9) if h[1] == 0 else h))
        else:
            c = _cc(item)
            ranges.append((c, c))
    return ranges


def arch_matches(spec, cc: tuple[int, int]) -> bool:
    return any(lo <= tuple(cc) <= hi for lo, hi in parse_arch(spec))


def arch_text(spec) -> str:
    return spec if isinstance(spec, str) else " or ".join(spec)
