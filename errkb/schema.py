"""JSON Schemas (2020-12) generated from the pydantic models, committed under data/schema/."""

from __future__ import annotations

import json
from pathlib import Path

from errkb import layout
from errkb.model import Record, Site

DIALECT = "https://json-schema.org/draft/2020-12/schema"
MODELS = {"record.schema.json": Record, "site.schema.json": Site}


def schema_files() -> dict[str, dict]:
    out = {}
    for name, model in MODELS.items():
        schema = model.model_json_schema(mode="validation")
        out[name] = {"$schema": DIALECT, "$id": f"https://errkb.dev/schema/{name}", **schema}
    return out


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_schemas(data_dir: Path) -> list[Path]:
    paths = []
    for name, schema in schema_files().items():
        path = layout.schema_path(data_dir, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(schema))
        paths.append(path)
    return paths


def load_schema(data_dir: Path, name: str) -> dict:
    return json.loads(layout.schema_path(data_dir, name).read_text())
