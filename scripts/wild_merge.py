"""Merge the collectors' groups (tests/wild/collect/G/) into the wild corpus.

    python scripts/wild_merge.py

Hits are ordered by query index, then rank; a URL seen earlier is a duplicate, wherever the
earlier hit came from (SAMPLING.md section 3). Writes tests/wild/hits.jsonl (every hit and its
decision), tests/wild/pastes/ and tests/wild/labels.jsonl, and checks that each label's
message is a substring of its paste. Existing pastes are never rewritten: the corpus only grows.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

WILD = Path(__file__).resolve().parent.parent / "tests" / "wild"
FIELDS = ("file", "url", "in_scope", "message", "library", "family", "note")


def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> int:
    groups = sorted(p for p in (WILD / "collect").iterdir() if p.is_dir())
    hits, labels = [], {}  # labels by (group, url)
    for group in groups:
        hits += [(hit, group) for hit in read_jsonl(group / "hits.jsonl")]
        for label in read_jsonl(group / "labels.jsonl"):
            labels[group, label["url"]] = {k: label[k] for k in FIELDS}
    hits.sort(key=lambda pair: (pair[0]["q"], pair[0]["rank"]))
    seen: set[str] = set()
    merged_hits, merged_labels, problems = [], [], []
    (WILD / "pastes").mkdir(exist_ok=True)
    for hit, group in hits:
        url = hit["url"]
        if url in seen:
            merged_hits.append({**hit, "decision": "duplicate"})
            continue
        seen.add(url)
        decision = hit["decision"]
        if decision == "duplicate":  # cannot be: the group's first copy sorts before it
            problems.append(f"{url}: first seen as a duplicate")
        merged_hits.append({**hit, "decision": decision})
        if decision != "paste":
            continue
        if (group, url) not in labels:
            problems.append(f"{url}: a paste hit without a label")
            continue
        label = labels[group, url]
        target = WILD / "pastes" / label["file"]
        if not target.exists():
            shutil.copyfile(group / "pastes" / label["file"], target)
        if label["message"] and label["message"] not in target.read_text(encoding="utf-8"):
            problems.append(f"{label['file']}: message is not in the paste")
        merged_labels.append(label)
    with open(WILD / "hits.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(h, ensure_ascii=False) + "\n" for h in merged_hits)
    with open(WILD / "labels.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(x, ensure_ascii=False) + "\n" for x in merged_labels)
    print(f"{len(merged_hits)} hits, {len(merged_labels)} pastes, {len(problems)} problems")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
