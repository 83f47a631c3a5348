"""What linting a file gives: findings, or the reason it was skipped. Light on purpose: the
driver and the output formats use these without importing libcst."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

UNUSED_SUPPRESSION = "EKB000"
MAX_BYTES = 5 * 1024 * 1024


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

    def to_json(self) -> dict:
        return asdict(self)


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
