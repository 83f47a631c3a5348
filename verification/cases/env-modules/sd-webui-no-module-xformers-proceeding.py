"""Stability-AI's Stable Diffusion 2 code (ldm/modules/diffusionmodules/model.py) prints "No module
'xformers'. Proceeding without it." at import time when its xformers import raises, and its VAE attention
blocks are then the plain AttnBlock; the AUTOMATIC1111 web UI blocks that import on purpose unless
--xformers is on its command line.

Environment: a new virtual environment with torch 2.13.0+cpu (local wheel), einops, numpy and pillow (PyPI,
what ldm/util.py and the model files import); xformers not installed. Stability-AI/stablediffusion at
cf1d67a (the commit the web UI clones as repositories/stable-diffusion-stability-ai) and at 1929ea2 (the
commit the record cites; its model.py also imports lightning, so that import is noted, not required), the
`ldm` folder exported from a local clone by verification/cases/_downstream.py (nothing of it is committed).
The web UI itself (a 1.6 GB snapshot) is not run: its import hook's effect, None put into
sys.modules['xformers'] when '--xformers' is not among the arguments, is done by the child in its own words.

Reproduce: `import ldm.modules.diffusionmodules.model` prints the record's line (1) with xformers absent,
(2) with the hook's None and no --xformers, (3) with --xformers given but xformers absent (the meaning's
"flag set and the line still appears" case); make_attn(64) then returns AttnBlock, whose output is within
1e-5 of the same block run in float64 (generation goes on with plain attention). Fix 1 (--xformers with an
xformers wheel) needs a CUDA torch: skipped. Fix 2: the fix's check, run by the environment's Python,
stops with the real reason (ModuleNotFoundError: No module named 'xformers')."""

import json

from verification.cases import _builds as b
from verification.cases import _downstream, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
REPO = "Stability-AI/stablediffusion"
WEBUI_PIN = "cf1d67a6fd5ea1aa600c4df58e5b47da45f6bdbf"
CITED = "1929ea2950d2d1c4e3e8a8147f2dad9887fa811d"
CHECK = "import torch, xformers, xformers.ops; print(torch.__version__, xformers.__version__)"

CHILD = r'''
import json, sys
MODE, ROOT = sys.argv[1], sys.argv[2]
sys.path.insert(0, ROOT)
args = ["webui.py", "--xformers"] if MODE == "flag" else ["webui.py"]
if MODE in ("hook", "flag") and "--xformers" not in "".join(args):
    sys.modules["xformers"] = None  # what the web UI's import hook does without --xformers
print("ERRKB-IMPORT-BEGIN", flush=True)
try:
    import ldm.modules.diffusionmodules.model as m
except ImportError as e:
    print("RESULT", json.dumps({"import_error": f"{type(e).__name__}: {e}"}), flush=True)
    raise SystemExit(0)
print("ERRKB-IMPORT-END", flush=True)
import torch
torch.manual_seed(0)
blk = m.make_attn(64).eval()
x = torch.randn(2, 64, 8, 8)
with torch.no_grad():
    out = blk(x)
    ref = blk.double()(x.double())
print("RESULT", json.dumps({"flag": m.XFORMERS_IS_AVAILBLE, "cls": type(blk).__name__,
                            "err": float((out.double() - ref).abs().max())}), flush=True)
'''

_runs: dict = {}


def _env(ctx):
    env = _venv.venv(ctx, "cpu-torch-einops-numpy-pillow", pip=b.PIP,
                     install=[*b.cpu_torch_requirement(), "einops", "numpy", "pillow"])
    _venv.noted(ctx, env)
    return env


def _run(ctx, mode: str, commit: str = WEBUI_PIN) -> tuple[_venv.Run, dict, list[str]]:
    key = (mode, commit)
    if key not in _runs:
        env = _env(ctx)
        root = _downstream.tree(ctx, REPO, commit, ("ldm",))
        code = CHILD.replace("sys.argv[1], sys.argv[2]", f"{mode!r}, {str(root)!r}")
        _runs[key] = b.run_with_torch(ctx, code, env=env)
    res = _runs[key]
    found = [line[7:] for line in res.output.splitlines() if line.startswith("RESULT ")]
    if not found:
        _venv.reraise(res.output)
        raise AssertionError(f"{mode} at {commit[:7]}: the child printed no result: {res.tail(600)}")
    during = res.output.split("ERRKB-IMPORT-BEGIN", 1)[-1].split("ERRKB-IMPORT-END", 1)[0]
    lines = [line.strip() for line in during.splitlines() if line.strip() and not line.startswith("RESULT ")]
    return res, json.loads(found[-1]), lines


def reproduce(ctx):
    cited, cres, clines = _run(ctx, "absent", CITED)
    ctx.note(f"1929ea2, xformers absent: printed {clines[:2]}; {cres.get('import_error') or cres}")
    results = {}
    for mode in ("hook", "flag", "absent"):
        res, result, lines = _run(ctx, mode)
        results[mode] = (res, result, lines)
        ctx.note(f"cf1d67a, {mode}: printed during the import {lines[:2]}; make_attn(64) -> {result.get('cls')}, "
                 f"XFORMERS_IS_AVAILBLE={result.get('flag')}, against float64 {result.get('err')}")

    def printed():
        for mode, (res, result, lines) in results.items():
            if "import_error" in result:
                raise AssertionError(f"{mode}: the model file did not import: {result['import_error']}")
            if result["cls"] != "AttnBlock" or result["flag"] is not False or result["err"] > 1e-5:
                raise AssertionError(f"{mode}: the fallback is not the plain AttnBlock: {result}")
            if not any(_venv.tool_message(line, ctx.record["template"]) for line in lines):
                raise AssertionError(f"{mode}: the import printed no such line: {lines}")
        _venv.raise_tool_message("printed", "\n".join(results["absent"][2]), ctx.record["template"])
    ctx.expect_error(printed)


def fix_1(ctx):
    ctx.skip("--xformers with an xformers wheel built for the web UI's CUDA torch needs a GPU build of torch")


def fix_2(ctx):
    res = _env(ctx).python_run(CHECK)
    ctx.note("`python -c <the fix's check>` in the same environment: " + _venv.last_exception(res.output, 200))

    def answers():
        if "No module named 'xformers'" not in _venv.last_exception(res.output, 400):
            raise AssertionError(f"the check did not name the missing module: {res.tail(300)}")
    ctx.call(answers)
