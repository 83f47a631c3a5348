"""Search the wild corpus's dev pastes only (never test's): `grep` over tests/wild/pastes/ reads
the frozen test split too, which nobody may look at while changing records or the matcher.

    .venv/bin/python scripts/grep_dev.py REGEX            # file, line number and line of each hit
    .venv/bin/python scripts/grep_dev.py --labels REGEX   # dev labels whose JSON line matches
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from errkb import wild  # noqa: E402


def main(argv: list[str]) -> int:
    labels_only = argv[:1] == ["--labels"]
    argv = argv[1:] if labels_only else argv
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    pattern, found = re.compile(argv[0]), 0
    for label in wild.load_labels():
        if label.part != "dev":
            continue
        if labels_only:
            line = json.dumps(asdict(label), ensure_ascii=False)
            if pattern.search(line):
                found += 1
                print(line)
            continue
        for number, line in enumerate(wild.paste_text(label).splitlines(), 1):
            if pattern.search(line):
                found += 1
                print(f"{label.file}:{number}: {line}")
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
