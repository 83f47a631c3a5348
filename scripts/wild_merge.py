"""Merge collectors' groups (tests/wild/collect/G/) into the wild corpus.

    python scripts/wild_merge.py

New hits are ordered by query index, then rank, after every hit already in tests/wild/hits.jsonl.gz;
a URL seen before is a duplicate, wherever the earlier hit came from (SAMPLING.md section 3).
Round-3 hits that split to test stay `set-aside` (never read, never added: the test split is
frozen). Appends to tests/wild/hits.jsonl.gz (rewritten whole) and tests/wild/labels.jsonl, copies new pastes into
tests/wild/pastes/, and checks that each label's message is a substring of its paste. Existing
pastes and labels are never rewritten: the corpus only grows.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from errkb import wild  # noqa: E402

WILD = wild.WILD_DIR
FIELDS = ("file", "url", "in_scope", "message", "library", "family", "note")


def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> int:
    old_hits, old_labels = wild.load_hits(), read_jsonl(WILD / "labels.jsonl")
    groups = sorted(p for p in (WILD / "collect").iterdir() if p.is_dir())
    hits, labels = [], {}  # labels by (group, url)
    for group in groups:
        hits += [(hit, group) for hit in read_jsonl(group / "hits.jsonl")]
        for label in read_jsonl(group / "labels.jsonl"):
            labels[group, label["url"]] = {k: label[k] for k in FIELDS}
    hits.sort(key=lambda pair: (pair[0]["q"], pair[0]["rank"]))
    seen = {h["url"] for h in old_hits}
    new_hits, new_labels, problems = [], [], []
    for hit, group in hits:
        url = hit["url"]
        if url in seen:
            new_hits.append({**hit, "decision": "duplicate"})
            continue
        seen.add(url)
        decision = hit["decision"]
        if decision == "duplicate":  # cannot be: the group's first copy sorts before it
            problems.append(f"{url}: first seen as a duplicate")
        new_hits.append({**hit, "decision": decision})
        if decision != "paste":
            continue
        if (group, url) not in labels:
            problems.append(f"{url}: a paste hit without a label")
            continue
        label = labels[group, url]
        target = WILD / "pastes" / label["file"]
        if target.exists():
            problems.append(f"{label['file']}: a paste of that name exists already")
            continue
        shutil.copyfile(group / "pastes" / label["file"], target)
        if label["message"] and label["message"] not in target.read_text(encoding="utf-8"):
            problems.append(f"{label['file']}: message is not in the paste")
        if label["in_scope"] and not label["message"]:
            problems.append(f"{label['file']}: in scope without a decisive line")
        new_labels.append(label)
    wild.write_hits(old_hits + new_hits)
    with open(WILD / "labels.jsonl", "a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(x, ensure_ascii=False) + "\n" for x in new_labels)
    print(f"{len(new_hits)} new hits, {len(new_labels)} new pastes "
          f"({len(old_labels) + len(new_labels)} in all), {len(problems)} problems")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    if sys.argv[1:]:  # it takes no options: `--help` must not merge
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main())
