import json

import jsonschema
import pytest

from errkb.model import Record
from errkb.schema import load_schema, render, schema_files


def test_committed_schemas_match_the_models(data_dir):
    for name, schema in schema_files().items():
        committed = (data_dir / "schema" / name).read_text()
        assert committed == render(schema), f"data/schema/{name} is stale: run `errkb schema --write`"


def test_schema_and_model_agree_on_a_broken_record(data_dir):
    path = next((data_dir / "records").glob("*/*.json"))
    raw = json.loads(path.read_text())
    validator = jsonschema.Draft202012Validator(load_schema(data_dir, "record.schema.json"))
    assert not list(validator.iter_errors(raw))
    Record.model_validate(raw)

    broken = {**raw, "backends": ["not-a-backend"], "surprise": 1}
    assert len(list(validator.iter_errors(broken))) == 2
    with pytest.raises(ValueError):
        Record.model_validate(broken)
