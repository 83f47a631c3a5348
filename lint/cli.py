"""`errkb lint`, `errkb rules`, `errkb rule ID` (loaded by errkb.cli through register())."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from errkb.lint.archs import ALL_ARCHS


def register(sub, data_dir_of) -> None:
    p = sub.add_parser("lint", help="find attention-backend calls that will raise (exit 1 on findings)")
    p.add_argument("paths", nargs="*", type=Path, help="files or folders (default: .); '-' reads standard input")
    p.add_argument("--format", choices=["text", "json", "sarif", "github"], default="text")
    p.add_argument("--gpu-arch", action="append", metavar="ARCH",
                   help=f"target GPU arch, repeatable or comma-separated ({', '.join(ALL_ARCHS)})")
    p.add_argument("--target-version", action="append", metavar="PKG==VER",
                   help="release the configuration rules check against (vllm, sglang, transformers), repeatable")
    p.add_argument("--select", action="append", help="rule codes, prefixes or names (comma-separated)")
    p.add_argument("--ignore", action="append", help="rule codes, prefixes or names to skip")
    p.add_argument("--jobs", "-j", type=int, default=0, help="processes (0: automatic)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    p.add_argument("--cache-dir", type=Path)
    p.add_argument("--report-unused-suppressions", action="store_true", default=None)
    p.add_argument("--config", type=Path, help="pyproject.toml to read [tool.errkb] from")
    p.add_argument("--file-timeout", type=float, metavar="SECONDS",
                   help="give up a file whose analysis takes longer (reported as skipped; 0: no limit; default 60)")
    p.add_argument("--stdin-filename", type=Path, metavar="PATH",
                   help="with '-': the name the source read from standard input is linted (and reported) as")
    p.add_argument("--fix", action="store_true", help="apply the findings' safe autofixes to the files")
    p.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff: apply unsafe autofixes too")
    p.add_argument("--diff", action="store_true", help="print the autofixes as a unified diff; change nothing")
    p.add_argument("--lsp", action="store_true", help="run the editor (Language Server Protocol) server on stdio")
    p.set_defaults(func=lambda a: _lint(a, data_dir_of))

    p = sub.add_parser("lsp", help="the editor server (Language Server Protocol over stdio)")
    p.set_defaults(func=lambda a: _lsp(data_dir_of(a)))

    p = sub.add_parser("rules", help="list the lint rules")
    p.set_defaults(func=_rules)

    p = sub.add_parser("rule", help="explain one lint rule (code or name)")
    p.add_argument("id")
    p.set_defaults(func=lambda a: _rule(a, data_dir_of(a)))


def _split(values) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


def _lsp(data_dir: Path) -> int:
    from errkb.lint.lsp import serve

    return serve(data_dir)


def _lint(args: argparse.Namespace, data_dir_of) -> int:
    if args.lsp:
        return _lsp(data_dir_of(args))
    # Light imports only: libcst, the rules and the records load when a file passes the prefilter.
    from errkb.lint import config as config_mod
    from errkb.lint.runner import cache_dir_of, lint_paths, lint_stdin
    from errkb.lint.table import RecordTexts, rule_table

    from_stdin = [str(p) for p in args.paths] == ["-"] or (args.stdin_filename is not None and not args.paths)
    if Path("-") in args.paths and not from_stdin:
        print("errkb lint: '-' (standard input) cannot be combined with other paths", file=sys.stderr)
        return 2
    if args.stdin_filename is not None and not from_stdin:
        print("errkb lint: --stdin-filename names standard input: give '-' (or no path) with it", file=sys.stderr)
        return 2
    try:
        cfg = config_mod.load(args.config.parent if args.config else None)
        if args.gpu_arch:
            cfg.archs = config_mod.check_archs(_split(args.gpu_arch))
        if args.target_version:
            cfg.versions = {**cfg.versions, **config_mod.check_versions(_split(args.target_version))}
        if args.select:
            cfg.select = _split(args.select)
        if args.ignore:
            cfg.ignore = [*cfg.ignore, *_split(args.ignore)]
        if args.report_unused_suppressions:
            cfg.report_unused = True
        if args.cache_dir:
            cfg.cache_dir = args.cache_dir
        if args.file_timeout is not None:
            cfg.file_timeout = config_mod.check_timeout(args.file_timeout)
        rows = rule_table(cache_dir_of(cfg, not args.no_cache))
        codes = config_mod.selected({c: r.name for c, r in rows.items()}, cfg.select, cfg.ignore)
    except config_mod.ConfigError as exc:
        print(f"errkb lint: {exc}", file=sys.stderr)
        return 2
    missing = [str(p) for p in args.paths if not from_stdin and not p.exists() and not p.is_symlink()]
    if missing:
        print(f"errkb lint: no such file or directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    source = sys.stdin.buffer.read() if from_stdin else None
    try:
        texts = RecordTexts(data_dir_of(args), {r for row in rows.values() for r in row.records})
        if from_stdin:
            run = lint_stdin(source, args.stdin_filename or Path("-"), cfg, codes, texts,
                             use_cache=not args.no_cache, rows=rows)
        else:
            run = lint_paths(args.paths or [Path(".")], cfg, codes, texts, jobs=args.jobs,
                             use_cache=not args.no_cache, rows=rows)
    except Exception as exc:  # internal error: exit 2, never a traceback-less 1
        print(f"errkb lint: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    from errkb.lint.output import FORMATS

    findings = run.findings
    if args.fix or args.diff:
        from errkb.lint.fix_cli import fix_and_report

        return fix_and_report(args, run, cfg, codes, texts, rows, source)
    if cfg.report_unused is False:
        findings = [f for f in findings if f.rule != "EKB000"]
    sys.stdout.write(FORMATS[args.format](findings))
    for r in run.skipped:
        print(f"errkb lint: skipped {r.path}: {r.skipped}", file=sys.stderr)
    if args.format == "text":
        print(f"errkb lint: {len(findings)} finding(s) in {run.files} file(s)"
              f" ({run.cached} cached, {len(run.skipped)} skipped)", file=sys.stderr)
        if any(f.fix for f in findings):
            from errkb.lint.fix_cli import fixable_note

            print(fixable_note(findings), file=sys.stderr)
    if any(r.skipped.startswith("internal error") for r in run.skipped):
        return 2
    return 1 if findings else 0


def _rules(args: argparse.Namespace) -> int:
    from errkb.lint.docs import rule_list

    sys.stdout.write(rule_list())
    return 0


def _rule(args: argparse.Namespace, data_dir: Path) -> int:
    from errkb.lint.docs import find_rule, rule_page

    cls = find_rule(args.id)
    if cls is None:
        print(f"errkb rule: unknown rule {args.id!r} (see `errkb rules`)", file=sys.stderr)
        return 2
    sys.stdout.write(rule_page(cls, data_dir))
    return 0
