"""The FA4 release cases' gradient child (verification/cases/_fa4_releases.py) is only run on a GPU;
these checks keep its two sides in step on the CPU: what the rendered script saves is what
grads_match reads, and the pieces the cases plug in leave no placeholder behind."""

import ast
import importlib.util
import inspect
import json
import re
from pathlib import Path

from errkb import templates
from verification.cases import _fa4_releases as releases

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "verification" / "cases" / "fa4"


def _case(name: str):
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), CASES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _saved_keys(code: str) -> set[str]:
    tree = ast.parse(code)
    saves = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "torch.save"]
    assert len(saves) == 1
    return {k.value for d in ast.walk(saves[0]) if isinstance(d, ast.Dict) for k in d.keys if isinstance(k, ast.Constant)}


def _read_keys() -> set[str]:
    source = inspect.getsource(releases.grads_match)
    return set(re.findall(r'saved\["(\w+)"\]', source)) | {n for group in re.findall(r"for n in \(([^)]*)\)", source)
                                                         for n in re.findall(r'"(\w+)"', group)} \
        | set(re.findall(r'\("(d[qkv])", ', source))


def test_the_child_saves_what_grads_match_reads():
    code = releases.grad_child(releases.FLASH_ATTN_FUNC, batch=1, seqlen=8, head_dim=192, head_dim_v=128)
    assert _read_keys() == _saved_keys(code) == {"q", "k", "v", "do", "out", "dq", "dk", "dv"}


def test_every_child_the_cases_render_is_whole_python():
    preprocess = _case("fa4-bwd-preprocess-pred-shape-head-dim-not-multiple-of-32")
    rendered = [
        releases.grad_child(releases.SDPA_FUNC, batch=1, seqlen=512, head_dim=192, head_dim_v=128),
        releases.grad_child(releases.FLASH_ATTN_FUNC, batch=1, seqlen=512, head_dim=192, head_dim_v=128),
        releases.grad_child(preprocess.PADDED.replace("PAD_TO", "128"), batch=2, seqlen=256, head_dim=104,
                            focus=preprocess.PRED),
    ]
    for code in rendered:
        tree = ast.parse(code)
        assert [f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)] == ["attention"]
        assert not re.search(r"\b(SHAPE_AND_FOCUS|ATTENTION|PAD_TO)\b", code)


def test_the_focus_keeps_the_part_of_a_wrapped_diagnostic_the_record_matches():
    preprocess = _case("fa4-bwd-preprocess-pred-shape-head-dim-not-multiple-of-32")
    record = json.loads((ROOT / "data/records/fa4/fa4-bwd-preprocess-pred-shape-head-dim-not-multiple-of-32.json").read_text())
    # cutlass-dsl 4.8 prints the verifier's message over several lines, with a location before it
    wrapped = "loc(\"flash_bwd_preprocess.py\":212:8): error: " + record["message"].replace(" but got", "\n but got") + "\n\nsee the IR"
    found = re.search(preprocess.PRED, " ".join(wrapped.split()))
    assert found and templates.search_regex(record["template"]).search(found.group())
