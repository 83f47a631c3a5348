"""Lint the fifth held-out round's snippet files (bench/lint_threads/) with the flags recorded per hit.

Each kept hit in bench/lint_threads/hits.jsonl names its files and the `errkb lint` flags the
procedure in docs/lint.md ("Held-out corpus, fifth round") fixed for it (the GPU and versions
the thread states). Every file is linted on its own with `--format json --no-cache` and those
flags; the results are written to bench/lint_threads/findings.json (the frozen rules' run), or to
the file named with --out (bench/lint_threads/findings-after-fix.json: the run after the round's
fixes, an in-sample figure).

    .venv/bin/python bench/lint_threads.py [--out bench/lint_threads/findings-after-fix.json]
"""

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "lint_threads"
REPO = HERE.parent.parent


def main(argv: list[str]) -> int:
    out = REPO / argv[argv.index("--out") + 1] if "--out" in argv else HERE / "findings.json"
    errkb = REPO / ".venv" / "bin" / "errkb"
    results = []
    for line in (HERE / "hits.jsonl").read_text().splitlines():
        hit = json.loads(line)
        if hit["decision"] != "kept":
            continue
        for name in hit["files"]:
            cmd = [str(errkb), "lint", "--format", "json", "--no-cache", *hit["flags"], f"bench/lint_threads/{name}"]
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
