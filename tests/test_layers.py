"""The package's layers, checked from the imports: errkb/ is the core and imports none of the
API, the linter or the CLI; the API and the linter do not import each other or the CLI; only
cli/ (errkb.cli) puts them together."""

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LAYERS = {"errkb": REPO / "errkb", "errkb.api": REPO / "api", "errkb.lint": REPO / "lint", "errkb.cli": REPO / "cli"}
FORBIDDEN = {
    "errkb": {"errkb.api", "errkb.lint", "errkb.cli"},
    "errkb.api": {"errkb.lint", "errkb.cli"},
    "errkb.lint": {"errkb.api", "errkb.cli"},
}


def imported_names(path: Path) -> set[str]:
    """Every module a file imports, statically or by name through importlib."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__")):
            names.add(node.args[0].value)
    return names


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(layer):
    bad = []
    for path in sorted(LAYERS[layer].rglob("*.py")):
        for name in imported_names(path):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[layer]):
                bad.append(f"{path.relative_to(REPO)} imports {name}")
    assert not bad, "\n".join(bad)


def test_the_checker_sees_string_and_static_imports(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text("import importlib\nimportlib.import_module('errkb.lint.cli')\nfrom errkb.api import app\n")
    assert {"errkb.lint.cli", "errkb.api", "errkb.api.app"} <= imported_names(sample)


def test_one_module_knows_where_the_dataset_files_live():
    """errkb/layout.py: nothing else spells out the records/sites/schema folders or their globs."""
    folder = r"""["'](?:records|sites|schema)["']"""
    pattern = re.compile(rf"""/\s*{folder}|{folder}\s*/|,\s*{folder}\s*\)|glob\(["']\*/\*\.json""")
    spelled = [f"{path.relative_to(REPO)}:{n}" for folder in LAYERS.values() for path in sorted(folder.rglob("*.py"))
               if path.name != "layout.py"
               for n, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert not spelled, spelled
