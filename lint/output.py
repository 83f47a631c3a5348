"""Findings as text, JSON, SARIF 2.1.0 (GitHub code scanning) or GitHub workflow annotations."""

from __future__ import annotations

import json

from errkb.lint.results import UNUSED_SUPPRESSION, Finding

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def text(findings: list[Finding]) -> str:
    return "".join(f"{f.path}:{f.line}:{f.col}: {f.rule} {f.message}\n" for f in findings)


def as_json(findings: list[Finding]) -> str:
    return json.dumps([f.to_json() for f in findings], indent=2) + "\n"


def _esc_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _esc_prop(s: str) -> str:
    return _esc_data(s).replace(":", "%3A").replace(",", "%2C")


def github(findings: list[Finding]) -> str:
    out = []
    for f in findings:
        props = f"file={_esc_prop(f.path)},line={f.line},col={f.col}"
        if f.end_line:
            props += f",endLine={f.end_line},endColumn={f.end_col}"
        props += f",title={_esc_prop(f'errkb {f.rule} ({f.name})')}"
        level = "warning" if f.rule == UNUSED_SUPPRESSION else "error"
        out.append(f"::{level} {props}::{_esc_data(f.message)}\n")
    return "".join(out)


def sarif(findings: list[Finding]) -> str:
    from importlib import metadata

    try:
        version = metadata.version("errkb")
    except metadata.PackageNotFoundError:
        version = "0"
    from errkb.lint.rule import all_rules  # the rules' docstrings: SARIF only (libcst)

    rules = all_rules()
    descriptors = [{
        "id": code,
        "name": cls.NAME,
        "shortDescription": {"text": cls.__doc__.strip().split("\n\n")[0].replace("\n", " ")},
        "fullDescription": {"text": " ".join(cls.__doc__.split())},
        "help": {"text": f"errkb rule {code}; records: {', '.join(cls.RECORDS)}"},
        "defaultConfiguration": {"level": "error"},
        "properties": {"records": list(cls.RECORDS)},
    } for code, cls in rules.items()]
    descriptors.append({"id": UNUSED_SUPPRESSION, "name": "unused-suppression",
                        "shortDescription": {"text": "An errkb: ignore comment that silences nothing."},
                        "defaultConfiguration": {"level": "warning"}})
    index = {d["id"]: i for i, d in enumerate(descriptors)}
    results = []
    for f in findings:
        region = {"startLine": f.line, "startColumn": f.col}
        if f.end_line:
            region.update(endLine=f.end_line, endColumn=f.end_col)
        result = {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": "warning" if f.rule == UNUSED_SUPPRESSION else "error",
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": f.path, "uriBaseId": "%SRCROOT%"},
                "region": region}}],
        }
        if f.record_id:
            result["properties"] = {"record_id": f.record_id}
        results.append(result)
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "errkb", "version": version, "rules": descriptors}},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2) + "\n"


FORMATS = {"text": text, "json": as_json, "sarif": sarif, "github": github}
