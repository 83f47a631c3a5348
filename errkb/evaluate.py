"""Accuracy of matching on the labelled real pastes in tests/eval/ (report script and test)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from errkb.match import MatchIndex


@dataclass
class Outcome:
    file: str
    expected: str | None
    accepted: set[str]
    got: list[str]

    @property
    def top1(self) -> bool:
        if self.expected is None:
            return not self.got
        return bool(self.got) and self.got[0] in self.accepted

    @property
    def top3(self) -> bool:
        if self.expected is None:
            return not self.got
        return bool(set(self.got[:3]) & self.accepted)


def evaluate(index: MatchIndex, eval_dir: Path) -> list[Outcome]:
    labels = json.loads((eval_dir / "labels.json").read_text())
    out = []
    for label in labels:
        text = (eval_dir / "pastes" / label["file"]).read_text(encoding="utf-8")
        got = [m.id for m in index.match(text, limit=3)]
        accepted = {label["expected"], *label.get("also_ok", [])} - {None}
        out.append(Outcome(label["file"], label["expected"], accepted, got))
    return out


def summary(outcomes: list[Outcome]) -> dict[str, float]:
    n = len(outcomes)
    return {"pastes": n, "top1": sum(o.top1 for o in outcomes) / n, "top3": sum(o.top3 for o in outcomes) / n,
            "negatives": sum(o.expected is None for o in outcomes)}
