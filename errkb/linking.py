"""Keep records linked to every copy of their message.

The same message often stands in several places: a vendored copy (SGLang's FA4), an older
or newer file, a header shipped with a release. When a record explains one site, it explains
every site with the same template, so `errkb link` adds those links after a harvest; a copy
that another record already explains is left to that record (the same words can mean a
different thing in another release or kernel).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from errkb import store
from errkb.model import Site


def copies_to_link(record_sites: list[str], sites: dict[str, Site], by_template: dict[str, list[str]],
                   claimed: frozenset[str] = frozenset()) -> list[str]:
    """Sites with the same template as one of the record's, except those in `claimed` (linked by another record)."""
    linked = set(record_sites) | claimed
    extra = []
    for sid in record_sites:
        site = sites.get(sid)
        for other in by_template.get(site.template, []) if site else []:
            if other not in linked:
                linked.add(other)
                extra.append(other)
    return sorted(extra)


def link_copies(data_dir: Path) -> dict[str, list[str]]:
    """Add missing same-template sites to every record file; return what was added."""
    sites = {s.id: s for s in store.read_all_sites(data_dir)}
    by_template: dict[str, list[str]] = defaultdict(list)
    for site in sites.values():
        by_template[site.template].append(site.id)
    raws = {path: json.loads(path.read_text()) for path in store.record_paths(data_dir)}
    linked_by: dict[str, set[str]] = defaultdict(set)
    for raw in raws.values():
        for sid in raw.get("sites", []):
            linked_by[sid].add(raw["id"])
    added = {}
    for path, raw in raws.items():
        claimed = frozenset(sid for sid, owners in linked_by.items() if owners - {raw["id"]})
        extra = copies_to_link(raw.get("sites", []), sites, by_template, claimed)
        if extra:
            raw["sites"] = raw["sites"] + extra
            path.write_text(json.dumps(raw, indent=2, ensure_ascii=False) + "\n")
            added[raw["id"]] = extra
    return added
