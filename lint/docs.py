"""Rule documentation generated from the rule class and the records it links to."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from errkb import layout
from errkb.lint.rule import Example, all_rules


def _records(data_dir: Path, ids) -> dict[str, dict]:
    wanted = set(ids)
    return {path.stem: json.loads(path.read_text()) for path in layout.record_paths(data_dir) if path.stem in wanted}


def rule_list() -> str:
    rows = ["code     name                               records"]
    for code, cls in all_rules().items():
        rows.append(f"{code:8} {cls.NAME:34} {', '.join(cls.RECORDS)}"
                    + ("  [arch-dependent]" if cls.ARCH_DEPENDENT else ""))
    return "\n".join(rows) + "\n"


def find_rule(key: str):
    rules = all_rules()
    for code, cls in rules.items():
        if key.upper() == code or key == cls.NAME:
            return cls
    return None


def rule_page(cls, data_dir: Path) -> str:
    recs = _records(data_dir, cls.RECORDS)
    out = [f"{cls.CODE} {cls.NAME}", "", textwrap.fill(" ".join(cls.__doc__.split()), 96), ""]
    if cls.ARCH_DEPENDENT:
        out += ["Fires only for the configured target GPU archs (--gpu-arch / gpu-archs), or, in a file that",
                "names NVIDIA GPUs, for theirs (lint/archs.py GPU_NAMES), and not in a file that shows another",
                "vendor's accelerator: AMD ROCm, Hygon DCU/HCU, Kunlun XPU, Ascend, MUSA, MLU or Gaudi",
                "(lint/archs.py NON_NVIDIA_EVIDENCE).", ""]
    out.append("Prevents:")
    for rid in cls.RECORDS:
        r = recs.get(rid)
        if r is None:
            out.append(f"  {rid} (record missing)")
            continue
        out.append(f"  {rid}: {r['title']}")
        out.append(f"    raises {r['error_class']}: {r['message']}")
        out.append(textwrap.fill(r["meaning"], 92, initial_indent="    ", subsequent_indent="    "))
    out += ["", "Example that is reported:"]
    inv = cls.INVALID[0]
    out.append(textwrap.indent(inv.code, "    "))
    if isinstance(inv, Example) and inv.archs:
        out.append(f"    # for archs: {', '.join(inv.archs)}")
    out += ["", "Example that is fine:"]
    val = cls.VALID[0]
    out.append(textwrap.indent(val.code if isinstance(val, Example) else val, "    "))
    fixes = [f for rid in cls.RECORDS if rid in recs for f in recs[rid]["fixes"]]
    if fixes:
        f = fixes[0]
        out += ["", f"Fix ({f['title']}): {f['explanation']}"]
        if f.get("after"):
            out.append(textwrap.indent(f["after"], "    "))
    out += ["", f"Suppress one line with:  # errkb: ignore[{cls.CODE}]"]
    return "\n".join(out) + "\n"
