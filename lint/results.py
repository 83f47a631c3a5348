"""What linting a file gives: findings, or the reason it was skipped. Light on purpose: the
driver and the output formats use these without importing libcst."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

UNUSED_SUPPRESSION = "EKB000"
MAX_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class Fix:
    """A mechanical edit that removes a finding: the record fix it implements (the record is the
    finding's), and (start, end, replacement) edits in character offsets of the decoded source.
    Safe fixes keep what the code computes; unsafe ones change it (see docs/lint.md)."""

    title: str
    safe: bool
    record_fix: int  # 1-based index into the record's fixes
    edits: tuple[tuple[int, int, str], ...]

    @classmethod
    def from_json(cls, data: dict) -> "Fix":
        return cls(data["title"], bool(data["safe"]), int(data["record_fix"]),
                   tuple((int(a), int(b), str(t)) for a, b, t in data["edits"]))


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int  # 1-based
    col: int  # 1-based
    rule: str
    name: str
    record_id: str
    message: str
    end_line: int = 0
    end_col: int = 0
    fix: Fix | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.fix, dict):  # read back from the cache or the manifest
            object.__setattr__(self, "fix", Fix.from_json(self.fix))

    def to_json(self) -> dict:
        out = asdict(self)
        if self.fix is None:
            del out["fix"]
        return out


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    skipped: str | None = None  # why the file was not linted (reported, never fatal)


@dataclass(frozen=True)
class RecordText:
    error_class: str
    message: str
    template: str
    confirmed: bool = False  # its verification status is `confirmed`: only then is its fix offered


def unused_suppressions(path: str, sup: dict, used: dict[int, set[str]], scope: str) -> list[Finding]:
    """EKB000 findings for the suppression comments (line -> codes, None: all) that silenced no
    finding; `scope` says what a comment covers ("in this statement", "on this line")."""
    out = []
    for line, codes in sup.items():
        hit = used.get(line, set())
        unused = ([] if hit else ["*"]) if codes is None else sorted(codes - hit)
        if unused:
            what = "errkb: ignore" if codes is None else f"errkb: ignore[{', '.join(unused)}]"
            out.append(Finding(path, line, 1, UNUSED_SUPPRESSION, "unused-suppression", "",
                               f"unused suppression: `{what}` silences nothing {scope}"))
    return out
