"""Lint a held-out round's snippet files (default: the fifth round, bench/lint_threads/) with the flags recorded per hit.

Each kept hit in <dir>/hits.jsonl names its files and the `errkb lint` flags the procedure in
docs/lint.md ("Held-out corpus, fifth round"; the sixth round reuses it with bench/lint_threads6/)
fixed for it (the GPU and versions the thread states). Every file is linted on its own with
`--format json --no-cache` and those flags; the results are written to <dir>/findings.json (the
frozen rules' run), or to the file named with --out (bench/lint_threads/findings-after-fix.json:
the run after the fifth round's fixes, an in-sample figure).

    .venv/bin/python bench/lint_threads.py [--dir bench/lint_threads6] [--out PATH]
"""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DIR = REPO / "bench" / "lint_threads"


def main(argv: list[str]) -> int:
    here = REPO / argv[argv.index("--dir") + 1] if "--dir" in argv else DEFAULT_DIR
    out = REPO / argv[argv.index("--out") + 1] if "--out" in argv else here / "findings.json"
    rel = here.relative_to(REPO).as_posix()
    errkb = REPO / ".venv" / "bin" / "errkb"
    results = []
    for line in (here / "hits.jsonl").read_text().splitlines():
        hit = json.loads(line)
        if hit["decision"] != "kept":
            continue
        for name in hit["files"]:
            cmd = [str(errkb), "lint", "--format", "json", "--no-cache", *hit["flags"], f"{rel}/{name}"]
            proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
            try:
                findings = json.loads(proc.stdout) if proc.stdout.strip() else []
            except json.JSONDecodeError:
                findings = proc.stdout
            results.append(
                {
                    "url": hit["url"],
                    "file": name,
                    "flags": hit["flags"],
                    "exit": proc.returncode,
                    "findings": findings,
                    "stderr": proc.stderr.strip(),
                }
            )
    out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    total = sum(len(r["findings"]) for r in results if isinstance(r["findings"], list))
    print(f"{len(results)} files, {total} findings, exit codes {sorted({r['exit'] for r in results})}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
