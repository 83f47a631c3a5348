"""The `errkb` command line: a thin shell over the library, and the one place where the core
(errkb/), the API (api/) and the linter (lint/) are put together. Imports are made per
subcommand, so `errkb --help` loads neither pydantic nor libcst."""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from pathlib import Path


def _data_dir(args: argparse.Namespace) -> Path:
    from errkb import layout  # light: `errkb lint` must not load pydantic to find the data

    return Path(args.data_dir) if args.data_dir else layout.default_data_dir()


def cmd_harvest(args: argparse.Namespace) -> int:
    from errkb.harvest import harvest

    report = harvest(args.package, args.version, args.source, _data_dir(args))
    print(f"{report.package} {report.version}: {report.files} files, {report.sites} sites, "
          f"{report.templates} distinct templates")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from errkb.validate import validate

    report = validate(_data_dir(args))
    for line in report.warnings:
        print(f"warning: {line}")
    for line in report.errors:
        print(f"error: {line}", file=sys.stderr)
    print(f"{report.records} records, {report.sites} sites: "
          f"{len(report.errors)} errors, {len(report.warnings)} warnings")
    return 1 if report.errors else 0


def cmd_register(args: argparse.Namespace) -> int:
    """Issue ids for new record files (append them to data/ids.txt)."""
    from errkb import store
    from errkb.ids import register

    data_dir = _data_dir(args)
    ids = [p.stem for p in store.record_paths(data_dir)]
    for rid in register(data_dir, ids):
        print(f"registered {rid}")
    return 0


def cmd_link(args: argparse.Namespace) -> int:
    """Link every record to all sites that carry its sites' exact templates."""
    from errkb.linking import link_copies

    for rid, extra in link_copies(_data_dir(args)).items():
        print(f"{rid}: +{len(extra)} ({', '.join(extra)})")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from errkb.stats import compute_stats

    stats = compute_stats(_data_dir(args))
    if args.format == "json":
        print(json.dumps(stats, indent=2))
    else:
        print(f"records: {stats['records']}   sites: {stats['sites']}   templates: {stats['templates']}")
        for name, pkg in stats["packages"].items():
            print(f"  {name:<20} {pkg['sites']:>6} sites  versions {', '.join(pkg['versions'])}")
        v = stats["verification"]
        print(f"verification: {v['confirmed']} confirmed, {v['refuted']} refuted, {v['disputed']} disputed, "
              f"{v['error']} error, {v['skipped']} skipped; run environments: {_counted(e['gpu'] for e in v['environments'])}")
        e = v["entry_points"]
        others = ", ".join(f"{n} {k}" for k, n in e["records_by_verdict"].items() if n and k != "reached")
        print(f"reached from entry point: {v['reached_from_entry_point']} of {e['records']} records with an "
              f"entry-point step{' (' + others + ')' if others else ''}")
    return 0


def cmd_drift(args: argparse.Namespace) -> int:
    from errkb import store
    from errkb.drift import drift, format_drift

    try:
        report = drift(store.read_sites(_data_dir(args), args.package), args.old, args.new)
    except ValueError as exc:
        print(f"errkb drift: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(report.as_dict(), indent=2))
    else:
        print(format_drift(report))
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    """List the registries' releases that are not harvested yet; without --dry-run, harvest them."""
    from errkb import update
    from errkb.packages import load_packages

    if args.format == "json" and not args.dry_run:
        print("errkb update: --format json prints the listing only; add --dry-run", file=sys.stderr)
        return 2
    data_dir = _data_dir(args)
    configs = load_packages(data_dir)
    unknown = [name for name in args.package or [] if name not in configs]
    if unknown:
        print(f"errkb update: unknown package {', '.join(map(repr, unknown))}; "
              f"data/packages.json has {', '.join(configs)}", file=sys.stderr)
        return 2
    statuses = update.package_statuses(data_dir, args.package)
    failed = any(s.problem and s.registry for s in statuses)
    if args.format == "json":
        print(json.dumps([s.as_dict() for s in statuses], indent=2))
        return 1 if failed else 0
    print(update.format_statuses(statuses, args.limit))
    if args.dry_run:
        return 1 if failed else 0
    cache = Path(args.cache_dir) if args.cache_dir else data_dir.parent / update.CACHE_FOLDER
    for status in statuses:
        try:
            for item in update.harvest_missing(configs[status.package], status, data_dir, cache, args.limit):
                print(f"\n{update.format_harvested(item)}", flush=True)
        except update.UpdateError as exc:
            print(f"\nerrkb update: {status.package}: {exc}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def cmd_schema(args: argparse.Namespace) -> int:
    from errkb.schema import schema_files, write_schemas

    if args.write:
        for path in write_schemas(_data_dir(args)):
            print(f"wrote {path}")
    else:
        for name, schema in schema_files().items():
            print(f"--- {name}\n{json.dumps(schema, indent=2)}")
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    """Explain an error: TEXT, or standard input when TEXT is '-' or absent and stdin is piped."""
    from errkb.explain import format_explained
    from errkb.lookup import Lookup

    if args.text and args.text != ["-"]:
        text = " ".join(args.text)
    elif args.text == ["-"] or not sys.stdin.isatty():
        text = sys.stdin.read()
    else:
        print("errkb explain: give the error text, or pipe it in (errkb explain - < log.txt)", file=sys.stderr)
        return 2
    lookup = Lookup.load(_data_dir(args))
    if args.format == "json":  # exactly what POST /v1/match answers
        body = json.loads(lookup.match_json(text, args.limit, args.project))
        print(json.dumps(body, indent=2))
        return 0 if body["matches"] else 1
    hits = lookup.explain(text, args.limit, args.project)
    print(format_explained(hits, [] if hits else lookup.withheld(text, args.project)))
    return 0 if hits else 1


def cmd_show(args: argparse.Namespace) -> int:
    from errkb.explain import format_record
    from errkb.lookup import Lookup

    record = Lookup.load(_data_dir(args)).record(args.id)
    if record is None:
        print(f"errkb show: no record {args.id!r}", file=sys.stderr)
        return 2
    print(format_record(record, args.format))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from errkb.api.server import Limits, serve

    limits = Limits(header_timeout_s=args.header_timeout, body_timeout_s=args.body_timeout,
                    keep_alive_s=args.keep_alive, max_connections=args.max_connections)
    serve(Path(args.data_dir) if args.data_dir else None, host=args.host, port=args.port, limits=limits)
    return 0


def cmd_sites(args: argparse.Namespace) -> int:
    """Find harvested sites whose template contains TEXT (for linking records)."""
    from errkb import store

    needle = args.text.lower()
    sites = store.read_all_sites(_data_dir(args))
    for site in sites:
        if needle in site.template.lower() and (not args.package or site.package == args.package):
            occ = site.occurrences[-1]
            print(f"{site.id}\t{site.path}:{occ.lines[0]}@{occ.version}\t{site.error_class}\t{site.template}")
    return 0


def _register_plugins(sub: argparse._SubParsersAction) -> None:
    """Subcommands that live with their feature: `errkb.lint.cli` (lint, rules, rule) and
    `errkb.verify.cli` (verify); each exposes register(subparsers, data_dir_of)."""
    import importlib

    for module in ("errkb.lint.cli", "errkb.verify.cli"):
        try:
            plugin = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if not module.startswith(str(exc.name)):  # a missing plugin, not a broken one
                raise
            continue
        plugin.register(sub, _data_dir)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="errkb", description=__doc__)
    parser.add_argument("--data-dir", help="dataset folder (default: the one shipped with errkb)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("harvest", help="harvest message sites from one released version")
    p.add_argument("package")
    p.add_argument("version")
    p.add_argument("source", help="wheel, sdist, folder, or git:REPO_DIR@REF")
    p.set_defaults(func=cmd_harvest)

    p = sub.add_parser("validate", help="check records and sites; exit 1 on errors")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("register", help="issue ids for new records (append to data/ids.txt)")
    p.set_defaults(func=cmd_register)

    p = sub.add_parser("link", help="link records to every copy of their sites' messages (after a harvest)")
    p.set_defaults(func=cmd_link)

    p = sub.add_parser("stats", help="dataset counts")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("drift", help="messages added, removed, moved and reworded between two versions")
    p.add_argument("package")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=cmd_drift)

    p = sub.add_parser("update", help="list (--dry-run) or harvest the registries' releases not harvested yet")
    p.add_argument("--dry-run", action="store_true", help="only list the missing releases")
    p.add_argument("--package", action="append", metavar="NAME", help="only this package (repeatable)")
    p.add_argument("--limit", type=_positive_int, metavar="N", help="harvest at most N releases per package, oldest first")
    p.add_argument("--format", choices=["text", "json"], default="text", help="json: the listing (needs --dry-run)")
    p.add_argument("--cache-dir", help="where downloads go (default: .update-cache next to the data folder)")
    p.set_defaults(func=cmd_update)

    p = sub.add_parser("schema", help="print the JSON Schemas, or --write them to data/schema")
    p.add_argument("--write", action="store_true")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("explain", help="match a pasted error or traceback to records")
    p.add_argument("text", nargs="*", help="the error text; '-' or nothing (with a pipe) reads stdin")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--limit", type=int, default=3)
    p.add_argument("--project", default="", metavar="NAME_OR_URL",
                   help="the kernel library the text comes from (flash-attn, flashinfer, xformers, ...) or a GitHub "
                        "URL in its repository: a bare line several libraries print then answers for it")
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("show", help="show one record")
    p.add_argument("id")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("serve", help="serve the REST API and the web page")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    from errkb.api.server import Limits  # light: no uvicorn, no app

    p.add_argument("--header-timeout", type=float, default=Limits.header_timeout_s, metavar="S",
                   help="seconds a client has to send a request's line and headers (default %(default)s)")
    p.add_argument("--body-timeout", type=float, default=Limits.body_timeout_s, metavar="S",
                   help="seconds a client has to send a POST body; then 408 (default %(default)s)")
    p.add_argument("--keep-alive", type=float, default=Limits.keep_alive_s, metavar="S",
                   help="seconds an idle connection is kept between requests (default %(default)s)")
    p.add_argument("--max-connections", type=int, default=Limits.max_connections, metavar="N",
                   help="open connections at most; one more is answered 503 and closed (default %(default)s)")
    p.set_defaults(func=cmd_serve)

    _register_plugins(sub)

    p = sub.add_parser("sites", help="find harvested sites by message text")
    p.add_argument("text")
    p.add_argument("--package")
    p.set_defaults(func=cmd_sites)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # argparse cannot take positionals on both sides of an option (`verify merge --into X A B`):
    # a subcommand that allows it names the list the leftover words belong to.
    if extra and (spill := getattr(args, "leftovers_into", None)) and not any(w.startswith("-") for w in extra):
        getattr(args, spill).extend(extra)
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.func(args)
    except BrokenPipeError:  # `errkb show X | head`: the reader left; that is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0


if __name__ == "__main__":
    sys.exit(main())


def _counted(names) -> str:
    """"NVIDIA H200 ×9, none (CPU only) ×40": one entry per distinct name, most frequent first."""
    counts = collections.Counter(names)
    return ", ".join(f"{name} ×{n}" for name, n in counts.most_common())
