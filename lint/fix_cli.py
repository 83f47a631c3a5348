"""`errkb lint --fix / --diff [--unsafe-fixes]`: fix the files a lint run found fixable, then
report what is left (or print the diff and change nothing). Standard input is fixed to
standard output, its remaining findings going to standard error."""

from __future__ import annotations

import sys
from pathlib import Path

from errkb.lint import fixes
from errkb.lint.output import FORMATS
from errkb.lint.results import UNUSED_SUPPRESSION, Finding


def fixable_note(findings: list[Finding]) -> str:
    safe = sum(1 for f in findings if f.fix is not None and f.fix.safe)
    unsafe = fixes.hidden_unsafe(findings)
    more = f" ({unsafe} more with --unsafe-fixes)" if unsafe else ""
    return f"errkb lint: {safe} fixable with --fix{more}"


def _linter(name: Path, cfg, codes, texts, rows, use_cache: bool) -> fixes.LintBytes:
    from errkb.lint.runner import lint_stdin

    def lint(source: bytes):
        run = lint_stdin(source, name, cfg, codes, texts, use_cache=use_cache, rows=rows)
        result = run.results[0] if run.results else None
        return (result.findings, result.skipped) if result else ([], None)

    return lint


def fix_and_report(args, run, cfg, codes, texts, rows, stdin_source: bytes | None) -> int:
    from errkb.lint.runner import _read

    unsafe, write = args.unsafe_fixes, args.fix and not args.diff
    use_cache = not args.no_cache
    done: list[fixes.FileFix] = []
    real: dict[str, str] = {}
    if stdin_source is not None:
        name = args.stdin_filename or Path("-")
        done.append(fixes.fix_source(name.as_posix(), stdin_source, _linter(name, cfg, codes, texts, rows, use_cache),
                                     unsafe))
    else:
        wanted = fixes.fixable_paths(run.findings, unsafe)
        real = fixes.real_paths(args.paths or [Path(".")], cfg) if wanted else {}
        for reported in wanted:
            path = real.get(reported)
            source = _read(path) if path else "not found again"
            if isinstance(source, str):
                print(f"errkb lint: not fixed {reported}: {source}", file=sys.stderr)
                continue
            done.append(fixes.fix_source(reported, source, _linter(Path(path), cfg, codes, texts, rows, use_cache),
                                         unsafe))
    changed = [d for d in done if d.after != d.before]
    for d in done:
        if d.problem:
            print(f"errkb lint: {d.path}: {d.problem}", file=sys.stderr)
    fixed = sum(d.fixed for d in changed)

    if args.diff:
        sys.stdout.write("".join(fixes.unified_diff(d.path, d.before, d.after) for d in changed))
        print(f"errkb lint: would fix {fixed} finding(s) in {len(changed)} file(s)", file=sys.stderr)
        return 1 if changed else 0

    left = {d.path: d.findings for d in done}
    if stdin_source is None:
        for d in changed:
            problem = fixes.write_if_unchanged(real[d.path], d.before, d.after) if write else None
            if problem:
                print(f"errkb lint: not fixed {d.path}: {problem}", file=sys.stderr)
                fixed -= d.fixed
                left[d.path] = [f for f in run.findings if f.path == d.path]
    findings = sorted([f for f in run.findings if f.path not in left] + [f for fs in left.values() for f in fs])
    if cfg.report_unused is False:
        findings = [f for f in findings if f.rule != UNUSED_SUPPRESSION]
    if stdin_source is not None:
        sys.stdout.buffer.write(done[0].after)
        sys.stdout.flush()
        sys.stderr.write(FORMATS[args.format](findings))
    else:
        sys.stdout.write(FORMATS[args.format](findings))
    for r in run.skipped:
        print(f"errkb lint: skipped {r.path}: {r.skipped}", file=sys.stderr)
    note = f"errkb lint: fixed {fixed} finding(s) in {len(changed)} file(s), {len(findings)} left"
    hidden = 0 if unsafe else fixes.hidden_unsafe(findings)
    print(note + (f" ({hidden} fixable with --unsafe-fixes)" if hidden else ""), file=sys.stderr)
    if any(r.skipped.startswith("internal error") for r in run.skipped):
        return 2
    return 1 if findings else 0

