"""Run `errkb lint` over the downstream corpus (bench/lint_corpus.json) and print a table.

    .venv/bin/python bench/lint_corpus.py                          # every project fetched
    .venv/bin/python bench/lint_corpus.py --extract /work/.mirror  # first unpack bare git dirs
    .venv/bin/python bench/lint_corpus.py --only verl,trl --findings /tmp/findings.json
    .venv/bin/python bench/lint_corpus.py --split held-out         # only the projects chosen after the rules
    .venv/bin/python bench/lint_corpus.py --split held-out-3       # the third round (docs/lint.md)
    .venv/bin/python bench/lint_corpus.py --split held-out-4       # the fourth round

The corpus is public projects that configure vLLM/SGLang engines or transformers attention, or
call attention kernels (issue 18 item 7: "measured on real user code"). Each project is read at
the commit recorded in the JSON file, from `{root}/{name}` (root: /tmp/errkb-corpus unless
--root). A project that is not there is listed as "not fetched" with how to get it.

Each project is linted by a whole `errkb lint` process (cold: --no-cache, so the seconds are a
first run); the file counts (files the linter reads, files past the byte prefilter) are counted
here with the linter's own discovery and prefilter, outside the timed process; "skipped" counts
the files errkb lint reported as not lintable (invalid YAML such as Helm templates, syntax errors).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "lint_corpus.json"
ERRKB = ROOT / ".venv" / "bin" / "errkb"


def load_corpus(path: Path) -> dict:
    try:
        corpus = json.loads(path.read_text())
        for p in corpus["projects"]:
            p["name"], p["repo"], p["commit"]  # noqa: B018 - every entry needs these three
    except (OSError, ValueError, KeyError, TypeError) as exc:
        sys.exit(f"lint_corpus: cannot read {path}: {exc}")
    return corpus


def project_dir(corpus: dict, project: dict, root: str | None) -> Path:
    return Path(corpus["path"].format(root=root or corpus["root"], name=project["name"]))


def how_to_fetch(project: dict, dest: Path) -> str:
    return (f"not fetched: fetch github:{project['repo']} and re-run with --extract <mirror folder>, or"
            f" git clone https://github.com/{project['repo']} C && mkdir -p {dest}"
            f" && git -C C archive {project['commit']} | tar -x -C {dest}")


def extract(project: dict, dest: Path, mirror: Path) -> bool:
    """Unpack the recorded commit from a bare mirror `<mirror>/<owner>+<name>/repo` into dest.
    Blobs the mirror lacks (snapshots leave out files of 4 MiB and more) are skipped and counted;
    `git archive` would stop at the first one."""
    git_dir = mirror / project["repo"].replace("/", "+", 1) / "repo"
    if dest.exists() or not git_dir.is_dir():
        return dest.exists()
    git = ["git", f"--git-dir={git_dir}"]
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", project["commit"]], capture_output=True)
    if listing.returncode != 0:
        print(f"lint_corpus: {git_dir} has no commit {project['commit']}", file=sys.stderr)
        return False
    blobs = []  # (mode, sha, path) of regular files; links and submodules are left out
    for entry in listing.stdout.split(b"\0"):
        if entry:
            meta, path = entry.split(b"\t", 1)
            mode, kind, sha = meta.split()
            if kind == b"blob" and mode in (b"100644", b"100755"):
                blobs.append((mode, sha, path.decode("utf-8", "surrogateescape")))
    batch = subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    missing = 0
    for mode, sha, path in blobs:
        batch.stdin.write(sha + b"\n")
        batch.stdin.flush()
        header = batch.stdout.readline().split()
        if header[-1] == b"missing":
            missing += 1
            continue
        data = batch.stdout.read(int(header[2]))
        batch.stdout.read(1)  # the newline after each object
        out = dest / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        if mode == b"100755":
            out.chmod(0o755)
    batch.stdin.close()
    batch.wait()
    if missing:
        print(f"lint_corpus: {project['name']}: {missing} file(s) not in the snapshot (large files)", file=sys.stderr)
    return True


def count_files(tree: Path) -> tuple[int, int]:
    """(files errkb lint reads, files past its byte prefilter), with the linter's own discovery
    and prefilter (the same groups of tokens every rule declares)."""
    from errkb.lint.config import Config
    from errkb.lint.rule import all_rules
    from errkb.lint.runner import discover

    try:
        from errkb.lint.prefilter import may_match
    except ImportError:  # before the prefilter had a module of its own
        from errkb.lint.engine import may_match

    tokens = tuple(sorted({group for cls in all_rules().values() for group in cls.PREFILTER}))
    files, _ = discover([tree], Config(root=tree))
    passed = 0
    for f in files:
        path = f[0] if isinstance(f, tuple) else f  # (path, relative path) in newer linters
        try:
            passed += may_match(Path(path).read_bytes(), tokens)
        except OSError:
            pass
    return len(files), passed


def lint(tree: Path, extra: list[str]) -> tuple[float, list[dict], int, str]:
    """One whole `errkb lint` process over tree: (seconds, findings, exit status, stderr)."""
    t0 = time.perf_counter()
    proc = subprocess.run([str(ERRKB), "lint", "--no-cache", "--format", "json", *extra, "."],
                          cwd=tree, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    try:
        findings = json.loads(proc.stdout) if proc.stdout.strip() else []
    except ValueError:
        findings = []
    return seconds, findings, proc.returncode, proc.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--root", help="folder holding the projects (default: the JSON file's root)")
    ap.add_argument("--extract", type=Path, metavar="MIRROR",
                    help="unpack missing projects from bare git dirs MIRROR/<owner>+<name>/repo")
    ap.add_argument("--only", help="comma-separated project names")
    ap.add_argument("--split", choices=("in-sample", "held-out", "held-out-3", "held-out-4", "all"), default="all",
                    help="in-sample: the projects the rules were tuned on; held-out, held-out-3, held-out-4: the second, third and fourth rounds, chosen afterwards")
    ap.add_argument("--findings", type=Path, help="write every finding (with its project) as JSON here")
    ap.add_argument("--show-skipped", action="store_true", help="list the files errkb lint skipped")
    ap.add_argument("lint_args", nargs="*", help="passed to errkb lint after --, e.g. -- --gpu-arch sm90")
    args = ap.parse_args()
    if not ERRKB.exists():
        sys.exit(f"lint_corpus: {ERRKB} not found (run make install)")

    corpus = load_corpus(args.corpus)
    only = set(args.only.split(",")) if args.only else None
    rows, all_findings, missing = [], [], 0
    print(f"{'project':<26} {'files':>6} {'prefilter':>9} {'skipped':>7} {'findings':>8} {'seconds':>8}")
    chosen = [p for p in corpus["projects"] if (not only or p["name"] in only)
              and args.split in ("all", p.get("split", "in-sample"))]
    for project in chosen:
        tree = project_dir(corpus, project, args.root)
        if args.extract:
            extract(project, tree, args.extract)
        if not tree.is_dir():
            missing += 1
            print(f"{project['name']:<26} {how_to_fetch(project, tree)}")
            continue
        files, passed = count_files(tree)
        seconds, findings, rc, stderr = lint(tree, args.lint_args)
        if rc == 2:
            print(f"{project['name']:<26} errkb lint failed (exit 2): {stderr.strip()[-300:]}")
            continue
        skipped = sum(1 for line in stderr.splitlines() if line.startswith("errkb lint: skipped "))
        rows.append((files, passed, skipped, len(findings), seconds))
        all_findings += [{"project": project["name"], "commit": project["commit"], **f} for f in findings]
        print(f"{project['name']:<26} {files:>6} {passed:>9} {skipped:>7} {len(findings):>8} {seconds:>8.2f}",
              flush=True)
        for line in stderr.splitlines() if args.show_skipped else ():
            if line.startswith("errkb lint: skipped "):
                print(f"    {line.removeprefix('errkb lint: ')}")

    if rows:
        total = [sum(col) for col in zip(*rows)]
        zero = sum(1 for r in rows if r[3] == 0)
        print(f"{'total (' + str(len(rows)) + ' projects)':<26} {total[0]:>6} {total[1]:>9} {total[2]:>7} {total[3]:>8}"
              f" {total[4]:>8.2f}")
        print(f"projects with no finding: {zero} of {len(rows)}")
    print(f"not fetched: {missing} of {len(chosen)}")
    if args.findings:
        args.findings.write_text(json.dumps(all_findings, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
