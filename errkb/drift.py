"""What changed in a package's messages between two harvested versions."""

from __future__ import annotations

from dataclasses import dataclass, field

from rapidfuzz import fuzz

from errkb.model import Site

REWORD_SIMILARITY = 75.0


@dataclass
class Drift:
    package: str
    old: str
    new: str
    added: list[Site] = field(default_factory=list)
    removed: list[Site] = field(default_factory=list)
    moved: list[tuple[Site, Site]] = field(default_factory=list)  # same message, other file
    reworded: list[tuple[Site, Site, float]] = field(default_factory=list)  # (old, new, similarity)
    unchanged: int = 0

    def as_dict(self) -> dict:
        def brief(site: Site, version: str) -> dict:
            lines = next(o.lines for o in site.occurrences if o.version == version)
            return {"id": site.id, "path": site.path, "line": lines[0], "template": site.template}

        return {
            "package": self.package, "old": self.old, "new": self.new, "unchanged": self.unchanged,
            "added": [brief(s, self.new) for s in self.added],
            "removed": [brief(s, self.old) for s in self.removed],
            "moved": [{"old": brief(a, self.old), "new": brief(b, self.new)} for a, b in self.moved],
            "reworded": [{"old": brief(a, self.old), "new": brief(b, self.new), "similarity": round(score, 1)}
                         for a, b, score in self.reworded],
        }


def drift(sites: list[Site], old: str, new: str) -> Drift:
    package = sites[0].package if sites else ""
    in_old = [s for s in sites if old in s.versions]
    in_new = [s for s in sites if new in s.versions]
    if not in_old or not in_new:
        missing = old if not in_old else new
        raise ValueError(f"version {missing} of {package or 'this package'} was not harvested")
    report = Drift(package, old, new)
    new_only = [s for s in in_new if old not in s.versions]
    old_only = [s for s in in_old if new not in s.versions]
    report.unchanged = sum(1 for s in in_new if old in s.versions)

    # Same text and kind in another file: moved.
    by_text = {}
    for s in new_only:
        by_text.setdefault((s.template, s.error_class), []).append(s)
    still_removed = []
    for s in old_only:
        candidates = by_text.get((s.template, s.error_class))
        if candidates:
            report.moved.append((s, candidates.pop(0)))
        else:
            still_removed.append(s)
    still_added = [s for group in by_text.values() for s in group]

    # Similar text in the same file (or function): reworded.
    for s in still_removed:
        best, best_score = None, 0.0
        for t in still_added:
            if t.path != s.path and t.function != s.function:
                continue
            score = fuzz.ratio(s.template, t.template)
            if score > best_score:
                best, best_score = t, score
        if best is not None and best_score >= REWORD_SIMILARITY:
            report.reworded.append((s, best, best_score))
            still_added.remove(best)
        else:
            report.removed.append(s)
    report.added = sorted(still_added, key=lambda s: (s.path, s.template))
    return report


def format_drift(report: Drift) -> str:
    d = report.as_dict()
    out = [f"{report.package} {report.old} -> {report.new}: {len(d['added'])} added, {len(d['removed'])} removed, "
           f"{len(d['moved'])} moved, {len(d['reworded'])} reworded, {d['unchanged']} unchanged"]
    for item in d["added"]:
        out.append(f"+ {item['path']}:{item['line']}  {item['template']}")
    for item in d["removed"]:
        out.append(f"- {item['path']}:{item['line']}  {item['template']}")
    for item in d["moved"]:
        out.append(f"> {item['old']['path']}:{item['old']['line']} -> {item['new']['path']}:{item['new']['line']}  "
                   f"{item['new']['template']}")
    for item in d["reworded"]:
        out.append(f"~ {item['new']['path']}:{item['new']['line']}  {item['old']['template']!r} -> "
                   f"{item['new']['template']!r} ({item['similarity']})")
    return "\n".join(out)
