"""Harvest message sites from released upstream code into `data/sites/`.

One call reads one released version of one package and merges it into that package's
site file: each site keeps the versions it appears in (with its lines), so re-harvesting a
version replaces just that version's lines.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from errkb import store
from errkb.harvest import cpp_sites, python_sites
from errkb.harvest.fingerprints import fingerprint_lines
from errkb.harvest.sources import iter_source
from errkb.model import Occurrence, Site
from errkb.packages import PackageConfig, load_packages
from errkb.versions import version_key


@dataclass
class HarvestReport:
    package: str
    version: str
    files: int
    sites: int
    templates: int


def extract_sites(cfg: PackageConfig, source: str) -> tuple[list[python_sites.RawSite], dict[str, str], int]:
    """Raw sites of one source, with repo paths, the scoped files' text and the file count."""
    files = list(iter_source(source))
    if source.startswith("git:"):  # a repository checkout: scope and name files as the distribution does
        files = [(cfg.dist_path(path), text) for path, text in files]
    defined: dict[str, cpp_sites.Macro] = {}  # a wrapper macro may call a raising one defined in another file
    for path, text in files:
        if not path.endswith(".py") and "#define" in text:
            for name, macro in cpp_sites.define_macros(text).items():
                # Defined again elsewhere (another extension's own CHECK_CONTIGUOUS): the raising one wins.
                if name not in defined or cpp_sites.raises_directly(macro):
                    defined[name] = macro
    macros = cpp_sites.raising_macros(defined)
    raw: list[python_sites.RawSite] = []
    scoped: dict[str, str] = {}
    for path, text in files:
        if not cfg.in_scope(path):
            continue
        repo_path = cfg.repo_path(path)
        scoped[repo_path] = text
        if path.endswith(".py"):
            raw.extend(python_sites.extract(repo_path, text, info_lines=cfg.info_lines))
        else:
            raw.extend(cpp_sites.extract(repo_path, text, macros))
    return raw, scoped, len(scoped)


def merge(existing: list[Site], package: str, version: str, raw: list[python_sites.RawSite]) -> list[Site]:
    """Replace `version`'s occurrences in `existing` with those in `raw`."""
    by_id: dict[str, Site] = {}
    for site in existing:
        kept = [o for o in site.occurrences if o.version != version]
        if kept:
            by_id[site.id] = site.model_copy(update={"occurrences": kept})
    lines: dict[str, list[int]] = defaultdict(list)
    newest: dict[str, python_sites.RawSite] = {}
    for r in raw:
        sid = Site.make_id(package, r.path, r.template)
        lines[sid].append(r.line)
        newest.setdefault(sid, r)
    for sid, r in newest.items():
        occ = Occurrence(version=version, lines=sorted(set(lines[sid])))
        old = by_id.get(sid)
        occurrences = sorted([*(old.occurrences if old else []), occ], key=lambda o: version_key(o.version))
        is_newest = occurrences[-1].version == version
        base = r if (is_newest or old is None) else old
        by_id[sid] = Site(
            id=sid, package=package, path=r.path, language=r.language,  # type: ignore[arg-type]
            kind=base.kind, error_class=base.error_class, template=r.template,  # type: ignore[arg-type]
            function=base.function, occurrences=occurrences)
    return sorted(by_id.values(), key=lambda s: (s.path, s.occurrences[-1].lines[0], s.template))


def harvest(package: str, version: str, source: str, data_dir: Path) -> HarvestReport:
    cfg = load_packages(data_dir)[package]
    raw, scoped, nfiles = extract_sites(cfg, source)
    sites = merge(store.read_sites(data_dir, package), package, version, raw)
    store.write_sites(data_dir, package, sites)

    window = {(r.path, r.line) for r in raw}
    store.add_fingerprints(data_dir, package, fingerprint_lines(scoped, window))

    digest = hashlib.sha256(Path(source).read_bytes()).hexdigest() if Path(source).is_file() else None
    store.record_harvest(data_dir, package, version, {
        "source": Path(source).name if not source.startswith("git:") else source.rsplit("/", 1)[-1],
        "sha256": digest, "harvested_on": dt.date.today().isoformat(),
        "files": nfiles, "sites": len({Site.make_id(package, r.path, r.template) for r in raw}),
    })
    templates = {s.template for s in sites if any(o.version == version for o in s.occurrences)}
    return HarvestReport(package, version, nfiles, len(raw), len(templates))
