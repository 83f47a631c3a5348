"""Plain-text renderings of matches and records for the CLI (and records as JSON).

They take records as JSON objects (`model.RecordDetail` dumped in JSON mode), which is what
the index cache keeps, so printing needs no pydantic."""

from __future__ import annotations

import json
import textwrap

from errkb.lookup import Explained


def wrap(text: str, indent: str = "  ") -> str:
    return textwrap.fill(text, 100, initial_indent=indent, subsequent_indent=" " * len(indent))


def format_record(d: dict, fmt: str = "text") -> str:
    if fmt == "json":
        return json.dumps(d, indent=2)

    gpus = sorted({run["gpu"] for run in d["verified_in"]})
    where = f" on {', '.join(gpus)}" if gpus else ""
    lines = [f"{d['id']}  [{d['verification']['status']}{where}]", d["title"], f"  {d['error_class']}: {d['message']}",
             "", "What it means:", wrap(d["meaning"]), "", "When it happens:"]
    lines += [wrap(c, "  - ") for c in d["triggers"]["conditions"]]
    lines += ["", "Fixes:"]
    for i, fix in enumerate(d["fixes"], 1):
        lines.append(f"  {i}. {fix['title']}")
        lines.append(wrap(fix["explanation"], "     "))
        for label in ("before", "after"):
            if code := fix.get(label):
                lines.append(f"     {label}:")
                lines += [f"       {line}" for line in code.splitlines()]
        if fix.get("caveats"):
            lines.append(wrap("caveat: " + fix["caveats"], "     "))
    lines += ["", "Raised at:" if d["raised_at"] else "Raised by:"]
    lines += [f"  {loc['package']} {loc['version']}  {loc['path']}:{loc['line']}" + (f"  {loc['url']}" if loc.get("url") else "")
              for loc in d["raised_at"]]
    if d.get("origin"):
        lines.append(wrap("Origin: " + d["origin"]))
    if d.get("evidence"):
        lines.append("Answers when the paste names: " + ", ".join(f"{e['contains']} ({e['package']})" for e in d["evidence"]))
    if d.get("failing_file"):
        lines.append("When the line names the file that failed, only: "
                     + ", ".join(f"{e['contains']} ({e['package']})" for e in d["failing_file"]))
    if d["affected"]:
        lines.append("Versions:")
        lines += [wrap(f"{a['package']}: {a['releases']['summary']}", "  ") for a in d["affected"]]
    if d["related"]:
        lines.append("Related: " + ", ".join(d["related"]))
    return "\n".join(lines)


def format_explained(hits: list[Explained], withheld: list[tuple[dict, list[str]]] = ()) -> str:
    """Matches as text (their JSON is what POST /v1/match answers); with none, the records
    the paste's message belongs to once it names the library (`Lookup.withheld`)."""
    if not hits:
        lines = ["No known attention-backend error found in this text."]
        if withheld:
            lines += ["Its message is explained by these records, but the text does not say which library raised it",
                      "(paste the whole traceback or log; it answers when the text names one of the words listed):"]
            lines += [wrap(f"{d['id']}: {d['title']} [needs: {', '.join(needs)}]", "  - ") for d, needs in withheld]
        else:
            lines.append("A bare CUDA error line does not say which library raised it: paste the whole traceback or log.")
        return "\n".join(lines)
    out = []
    for hit in hits:
        m = hit.match
        head = f"match {m.score:.2f} ({'; '.join(m.why)})"
        params = ("  parameters: " + ", ".join(f"{k}={v}" for k, v in m.params.items())) if m.params else ""
        if hit.record:
            out.append("\n".join(filter(None, [head, params, format_record(hit.record)])))
        elif hit.site:
            s = hit.site
            out.append("\n".join(filter(None, [head, params, f"{s['id']} (no curated record yet)",
                                               f"  {s['error_class']}: {s['template']}",
                                               f"  {s['package']} {', '.join(o['version'] for o in s['occurrences'])}  "
                                               f"{s['path']}:{s['occurrences'][-1]['lines'][0]}"])))
    return ("\n\n" + "-" * 100 + "\n\n").join(out)
