"""Qwen (v1) remote code: FlashSelfAttention.forward's first statement,
"assert all((i.dtype in [torch.float16, torch.bfloat16] for i in (q, k, v)))", fails when the config
promises half precision (so the flash path is built) but q, k and v reaching attention are float32.

Qwen-Audio's modeling_qwen.py, configuration_qwen.py and the files they import, at 0b0e882e (the commit
_qwen.py uses; modeling_qwen.py is the same at b50fb95, which the record also cites), exported from a local
clone (verification/cases/_downstream.py, ERRKB_VERIFY_GIT; nothing committed), imported as a bare package
in a child process, so transformers' remote-code loader is not involved (it would ask for
transformers-stream-generator). The model is built from Qwen-Audio's own config.json cut to 2 layers of
width 64 (a one-layer audio encoder of width 32, a vocabulary of 256): QWenLMHeadModel(config) runs the same
precision and flash-attn choice as from_pretrained(..., bf16=True).

GPU steps (an sm80+ CUDA GPU with flash_attn importable; the child is the worker's Python, and
ERRKB_QWEN_TRANSFORMERS, when set, a folder put in front of its path holding the transformers to use, e.g.
`pip install --target DIR --no-deps transformers==4.32.0`; the version used is noted):
- reproduce: bf16=True, use_flash_attn=True, the model on the GPU and then cast with .float() (the
  record's trigger): a forward pass stops on the assert (its statement read from the traceback, since a
  bare assert carries no message), with the flash path built (core_attention_flash present);
- fix_1: the same model left in bf16: the forward pass runs through FlashSelfAttention, and its logits
  are compared with the same weights run with use_flash_attn=False in bf16 (SDPA path);
- fix_2: fp32=True: no flash path is built and a float32 forward pass runs.
CPU step (fix_3, the fix's check as written): with torch 2.13.0+cpu and transformers 4.32.0 (the _qwen.py
environment), a bf16=True model cast with .float() shows float32 parameters beside config.bf16 True, the
mismatch the check is meant to reveal. On the CPU the flash path is never built (flash_attn does not import
and the query is not on CUDA), so the GPU steps are skipped there."""

import json

from verification.cases import _builds as b
from verification.cases import _downstream, _qwen, _venv

REQUIRES = {"cuda": False}
STEP_REQUIRES = {"reproduce": {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "einops", "transformers"]},
                 "fix_1": {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "einops", "transformers"]},
                 "fix_2": {"cuda": True, "arch": "sm80+", "packages": ["flash_attn", "einops", "transformers"]}}
TIMEOUT = 900

CHILD = r'''
import importlib, json, os, sys, traceback, types, collections
import torch, transformers
root, MODE = sys.argv[1], sys.argv[2]
pkg = types.ModuleType("errkb_qwen")
pkg.__path__ = [root]
sys.modules["errkb_qwen"] = pkg
cq = importlib.import_module("errkb_qwen.configuration_qwen")
mq = importlib.import_module("errkb_qwen.modeling_qwen")
print("VERSIONS", json.dumps(dict(transformers=transformers.__version__, torch=torch.__version__,
      cuda=torch.cuda.is_available())), flush=True)
raw = json.load(open(os.path.join(root, "config.json")))
raw.update(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, kv_channels=16, intermediate_size=128,
           vocab_size=256, max_position_embeddings=64, seq_length=64)
raw["audio"].update(n_state=32, n_head=2, n_layer=1, output_dim=64, audio_start_id=250)
keep = {k: v for k, v in raw.items() if not k.startswith("_") and k not in ("auto_map", "architectures")}

def build(**flags):
    cfg = cq.QWenConfig(**{**keep, **flags})
    torch.manual_seed(0)
    return mq.QWenLMHeadModel(cfg).eval()

dev = "cuda" if torch.cuda.is_available() else "cpu"
ids = torch.randint(0, 200, (1, 8), device=dev)

def run(m):
    with torch.no_grad():
        return m(ids).logits

def describe(m):
    return dict(flash_built=hasattr(m.transformer.h[0].attn, "core_attention_flash"),
                flash_func=mq.flash_attn_unpadded_func is not None, use_flash_attn=m.config.use_flash_attn,
                bf16=m.config.bf16, fp16=m.config.fp16, fp32=m.config.fp32,
                dtypes=sorted(str(d) for d in collections.Counter(p.dtype for p in m.parameters())))

if MODE == "float_after_bf16":
    m = build(bf16=True, use_flash_attn=True).to(dev).float()
    print("MODEL", json.dumps(describe(m)), flush=True)
    try:
        run(m)
        print("RAN", flush=True)
    except AssertionError as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        print("ASSERT", json.dumps(dict(line=(frame.line or "").strip(), function=frame.name,
              file=os.path.basename(frame.filename), message=str(exc))), flush=True)
elif MODE == "bf16":
    m = build(bf16=True, use_flash_attn=True).to(dev)
    print("MODEL", json.dumps(describe(m)), flush=True)
    got = run(m).float()
    ref_model = build(bf16=True, use_flash_attn=False).to(dev)
    ref = run(ref_model).float()
    print("RAN", json.dumps(dict(finite=bool(torch.isfinite(got).all()), maxdiff=float((got - ref).abs().max()))), flush=True)
elif MODE == "fp32":
    m = build(fp32=True, use_flash_attn="auto").to(dev)
    print("MODEL", json.dumps(describe(m)), flush=True)
    got = run(m)
    print("RAN", json.dumps(dict(finite=bool(torch.isfinite(got).all()), dtype=str(got.dtype))), flush=True)
elif MODE == "check":
    # the fix's check, on the model of the trigger (bf16 config, cast to float32 afterwards)
    model = build(bf16=True, use_flash_attn=True).float()
    from collections import Counter
    print("CHECK", json.dumps(dict(params={str(k): v for k, v in Counter(p.dtype for p in model.parameters()).items()},
          config=[model.config.bf16, model.config.fp16, model.config.fp32, model.config.use_flash_attn])), flush=True)
'''

_runs: dict = {}


def _line(res: _venv.Run, prefix: str) -> dict | None:
    line = next((line[len(prefix):] for line in res.output.splitlines() if line.startswith(prefix)), None)
    return json.loads(line) if line and line.strip() else ({} if line is not None else None)


def _gpu_child(ctx, mode: str) -> _venv.Run:
    import os
    import sys

    if mode not in _runs:
        root = _downstream.tree(ctx, _qwen.REPO, _qwen.COMMIT, _qwen.FILES)
        site = os.environ.get("ERRKB_QWEN_TRANSFORMERS")
        path = [site] if site else []
        env = dict(os.environ)
        if path:
            env["PYTHONPATH"] = os.pathsep.join([*path, env.get("PYTHONPATH", "")])
        _runs[mode] = _venv.run([sys.executable, "-c", CHILD, str(root), mode], env=env, cwd=_venv._tmp_root(), timeout=600)
    res = _runs[mode]
    ctx.note(f"child ({mode}): versions {_line(res, 'VERSIONS ')}; model {_line(res, 'MODEL ')}; "
             f"assert {_line(res, 'ASSERT ')}; ran {_line(res, 'RAN ')}"
             + ("" if any(_line(res, p) is not None for p in ("ASSERT ", "RAN ")) else f"; {_venv.last_exception(res.output, 300)}"))
    return res


def _statement(res: _venv.Run) -> None:
    """The child's bare AssertionError again, carrying its statement, as Python prints it."""
    got = _line(res, "ASSERT ")
    if got is None:
        _venv.reraise(res.output)
        return  # the forward pass ran: expect_error reports that
    raise AssertionError(got["line"])


def reproduce(ctx):
    res = _gpu_child(ctx, "float_after_bf16")
    model = _line(res, "MODEL ")
    if not model or not model["flash_built"]:
        raise AssertionError(f"the flash path was not built, so the trigger is not met: {model or res.tail(500)}")
    ctx.expect_error(_statement, res)


def _ran(res: _venv.Run) -> dict:
    got = _line(res, "RAN ")
    if got is None:
        _statement(res)
        _venv.reraise(res.output)
        raise AssertionError(res.tail(500))
    if not got.get("finite", False):
        raise AssertionError(f"non-finite logits: {got}")
    return got


def fix_1(ctx):
    res = _gpu_child(ctx, "bf16")
    got = ctx.call(_ran, res)
    model = _line(res, "MODEL ")
    if not model["flash_built"]:
        raise AssertionError(f"the bf16 model did not build the flash path: {model}")
    ctx.close([got["maxdiff"]], [0.0], atol=0.1, what="bf16 logits, flash path against the SDPA path")


def fix_2(ctx):
    res = _gpu_child(ctx, "fp32")
    got = ctx.call(_ran, res)
    model = _line(res, "MODEL ")
    if model["flash_built"] or got["dtype"] != "torch.float32":
        raise AssertionError(f"fp32=True still built the flash path or ran in half precision: {model}, {got}")


def fix_3(ctx):
    made = _qwen.env(ctx)
    root = _downstream.tree(ctx, _qwen.REPO, _qwen.COMMIT, _qwen.FILES)
    res = b.run_with_torch(ctx, CHILD.replace("root, MODE = sys.argv[1], sys.argv[2]", f"root, MODE = {str(root)!r}, 'check'"),
                           env=made, path=[b.target_dir(ctx, _qwen.TRANSFORMERS, env=made)])
    got = _line(res, "CHECK ")
    ctx.note(f"{_qwen.TRANSFORMERS}, torch 2.13.0+cpu: the check on a bf16=True model cast with .float(): {got or res.tail(400)}")

    def shows_mismatch():
        _venv.reraise(res.output)
        if got is None:
            raise AssertionError(res.tail(500))
        if set(got["params"]) != {"torch.float32"} or got["config"][0] is not True:
            raise AssertionError(f"the check does not show float32 parameters beside bf16=True: {got}")
    ctx.call(shows_mismatch)
