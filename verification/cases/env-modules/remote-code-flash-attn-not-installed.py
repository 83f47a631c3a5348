"""InternLM2 modeling code (InternVL's copy, and the remote code it comes from) raises ImportError('flash_attn is
not installed.') from _import_flash_attn() at the start of the language model's forward when
config.attn_implementation is 'flash_attention_2' and flash_attn's names do not import.

Environment: a new virtual environment with torch 2.13.0+cpu (local wheel) and einops (PyPI), transformers
4.37.2 (the release InternVL's pyproject pins, `pip --target` with its dependencies); flash-attn not installed.
OpenGVLab/InternVL's internvl_chat/internvl/model/internlm2 folder exported from a local clone
(verification/cases/_downstream.py) at e81aac3 (v1.5.1, 2024-05-19: no construction-time fallback) and at
28e99fc (the commit the record cites: InternLM2Model.__init__ sets 'eager' when has_flash_attn is False).
InternVL's package __init__ files import the whole chat model (peft, timm, ...), so the child registers
`internvl`, `internvl.model` and `internvl.model.internlm2` as bare packages and imports the modeling file
unchanged. The model is a tiny InternLM2ForCausalLM made in code (2 layers, hidden 64, 4 heads, vocabulary 128).

Reproduce: at e81aac3 the model built with attn_implementation 'flash_attention_2' raises the record's ImportError
in forward (the step notes the chained cause, `No module named 'flash_attn'`); at 28e99fc the same model is built
with 'eager' and its forward runs (noted: the meaning's "some copies fall back" claim). Fix 1: the fix's import
names the real cause (`No module named 'flash_attn'`). Fix 2 (from_pretrained(..., use_flash_attn=False)): that
keyword belongs to the Hugging Face Hub copies of InternVL's chat model, not to the GitHub tree read here, and the
Hub is out of reach: skipped. Control: the same tiny model with attn_implementation 'eager' at e81aac3 runs forward
and gives finite logits of the right shape."""

import json

from verification.cases import _builds as b
from verification.cases import _downstream, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
REPO = "OpenGVLab/InternVL"
OLD = "e81aac3"
CITED = "28e99fc8ab5818672ce18b76a8eb3211c6083fb7"
FOLDER = "internvl_chat/internvl/model/internlm2"
TRANSFORMERS = "transformers==4.37.2"
CHECK = ("from flash_attn import flash_attn_func, flash_attn_varlen_func; "
         "from flash_attn.bert_padding import pad_input, unpad_input, index_first_axis")

CHILD = r'''
import json, sys, types
IMPL, ROOT = sys.argv[1], sys.argv[2]
for name, sub in (("internvl", "/internvl_chat/internvl"), ("internvl.model", "/internvl_chat/internvl/model"),
                  ("internvl.model.internlm2", "/internvl_chat/internvl/model/internlm2")):
    pkg = types.ModuleType(name)
    pkg.__path__ = [ROOT + sub]
    sys.modules[name] = pkg
import torch
from internvl.model.internlm2.configuration_internlm2 import InternLM2Config
from internvl.model.internlm2.modeling_internlm2 import InternLM2ForCausalLM
torch.manual_seed(0)
config = InternLM2Config(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, attn_implementation=IMPL)
model = InternLM2ForCausalLM(config).eval()
print("BUILT", model.config.attn_implementation, flush=True)
ids = torch.randint(0, 128, (2, 8))
with torch.no_grad():
    logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits
print("RESULT", json.dumps({"impl": model.config.attn_implementation, "shape": list(logits.shape),
                            "finite": bool(torch.isfinite(logits).all())}), flush=True)
'''

_runs: dict = {}


def _env(ctx):
    env = _venv.venv(ctx, "cpu-torch-einops", pip=b.PIP, install=[*b.cpu_torch_requirement(), "einops"])
    _venv.noted(ctx, env)
    return env


def _run(ctx, commit: str, impl: str) -> _venv.Run:
    key = (commit, impl)
    if key not in _runs:
        env = _env(ctx)
        root = _downstream.tree(ctx, REPO, commit, (FOLDER,))
        code = CHILD.replace("sys.argv[1], sys.argv[2]", f"{impl!r}, {str(root)!r}")
        _runs[key] = b.run_with_torch(ctx, code, env=env, path=[b.target_dir(ctx, TRANSFORMERS, env=env)])
    return _runs[key]


def _outcome(res: _venv.Run) -> str:
    result = next((line for line in res.output.splitlines() if line.startswith("RESULT ")), None)
    return result or _venv.last_exception(res.output, 300)


def reproduce(ctx):
    cited = _run(ctx, CITED, "flash_attention_2")
    ctx.note(f"28e99fc, attn_implementation 'flash_attention_2': {_outcome(cited)}; "
             f"printed: {[l for l in cited.output.splitlines() if 'lash' in l and not l.startswith('RESULT')][:2]}")
    res = _run(ctx, OLD, "flash_attention_2")
    names = [f"{c}: {m}" for c, m in _venv.exception_lines(res.output)]
    ctx.note(f"{OLD}, attn_implementation 'flash_attention_2': exceptions printed {names[-3:]}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    res = _env(ctx).python_run(CHECK)
    cause = _venv.last_exception(res.output, 300)
    ctx.note(f"`python -c <the fix's import>` in the same environment: {cause}")

    def names_cause():
        if "No module named 'flash_attn'" not in cause:
            raise AssertionError(f"the import did not name the missing package: {res.tail(300)}")
    ctx.call(names_cause)


def fix_2(ctx):
    ctx.skip("use_flash_attn= is a keyword of the Hugging Face Hub copies of InternVL's chat model (not in the GitHub "
             "tree at e81aac3 or 28e99fc), and the Hub is out of reach here")


def control(ctx):
    res = _run(ctx, OLD, "eager")
    line = _venv.printed(res, "RESULT ")
    result = json.loads(line[7:])
    ctx.note(f"{OLD}, attn_implementation 'eager': {result}")

    def ran():
        if result["shape"] != [2, 8, 128] or not result["finite"] or result["impl"] != "eager":
            raise AssertionError(f"unexpected forward result: {result}")
    ctx.call(ran)
