"""Phi-3's Hub remote code logs "`flash-attention` package not found, consider installing for better
performance: No module named 'flash_attn'." when it is imported without flash-attn.

The Hugging Face Hub is out of reach here. The remote modeling_phi3.py and configuration_phi3.py of
microsoft/Phi-3-mini-4k-instruct are read from the GitHub copy the record cites,
shchahrykovich/phi3-vs-openelm at 031419e (Phi-3-mini-4k-instruct/original.py, Config.py, Config.json),
exported from a local clone (verification/cases/_downstream.py, ERRKB_VERIFY_GIT); nothing of it is
committed. A first child writes them into a checkpoint folder as the Hub repository lays them out
(modeling_phi3.py, configuration_phi3.py, config.json with the sizes cut to 2 layers of width 64, a
vocabulary of 128 and the token ids inside it) with random weights. Each step then loads that folder in a
fresh child, as a user does, with torch 2.13.0+cpu (with_cpu_torch, local wheel) and transformers 4.40.0
(the release of Phi-3's launch; `pip --target`), flash-attn absent. The remote module logs through
transformers' get_logger under `transformers_modules.<folder>.modeling_phi3`; a handler on the root
logger prints every record after a marker, and the ones of that tree are logged again in the worker.

Reproduce: from_pretrained(folder, trust_remote_code=True) logs the warning (and the window_size line
after it); the model then runs a forward pass. Fix 1: that forward pass gives finite logits with the
remote eager attention. Fix 2: transformers 4.41.2's built-in Phi-3 (no trust_remote_code) loads the same
folder, logs neither line, and its logits match the remote code's. Fix 4: the logger of the remote module (`transformers_modules`) raised to ERROR before from_pretrained
silences both lines, with the root handler and without it (then nothing reaches stderr either). The fix's
first form, transformers.utils.logging.set_verbosity_error(), was refuted: it sets transformers' own
logger tree, which the remote module's logger is not part of, so the line still reaches the root handler
and, in a process with no logging set up, stderr through Python's last-resort handler (noted each run).
Fix 3 (flash-attn on an Ampere GPU) is not run."""

import ast
import json
import logging

from errkb import templates
from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _downstream, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200

REPO = "shchahrykovich/phi3-vs-openelm"
COMMIT = "031419efedc004c15b61fdf941ec170d446b26d8"
FILES = ("Phi-3-mini-4k-instruct/original.py", "Phi-3-mini-4k-instruct/Config.py", "Phi-3-mini-4k-instruct/Config.json")
REMOTE = "transformers==4.40.0"
BUILTIN = "transformers==4.41.2"
LOGGER = "transformers_modules"
MARK = "ERRKB-PHASE load"

PREP = r'''
import json, os, shutil, sys, torch
src, folder = sys.argv[1], sys.argv[2]
os.makedirs(folder, exist_ok=True)
shutil.copy(os.path.join(src, "original.py"), os.path.join(folder, "modeling_phi3.py"))
shutil.copy(os.path.join(src, "Config.py"), os.path.join(folder, "configuration_phi3.py"))
cfg = json.load(open(os.path.join(src, "Config.json")))
cfg.update(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
           vocab_size=128, max_position_embeddings=64, original_max_position_embeddings=64, bos_token_id=1,
           eos_token_id=2, pad_token_id=0, torch_dtype="float32")
json.dump(cfg, open(os.path.join(folder, "config.json"), "w"), indent=1)
from transformers import AutoConfig, AutoModelForCausalLM
torch.manual_seed(0)
m = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(folder, trust_remote_code=True), trust_remote_code=True)
m.save_pretrained(folder + "-weights")
for name in os.listdir(folder + "-weights"):
    if name != "config.json" and not name.endswith(".py"):
        shutil.copy(os.path.join(folder + "-weights", name), folder)
print("PREPARED", folder, flush=True)
'''

LOAD = r'''
import json, logging, os, sys, torch
class _Tap(logging.Handler):
    def emit(self, r):
        print("ERRKB-LOG", r.levelname, r.name, repr(r.getMessage()), flush=True)
folder, KW, SILENCE, SAVE, COMPARE, TAP = (sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5],
                                           sys.argv[6] == "1")
if TAP:
    logging.getLogger().addHandler(_Tap())
if SILENCE == "verbosity":  # the fix as first written
    from transformers.utils import logging as tlogging
    tlogging.set_verbosity_error()
elif SILENCE == "modules":  # the corrected fix
    logging.getLogger("transformers_modules").setLevel(logging.ERROR)
print("ERRKB-PHASE load", flush=True)
from transformers import AutoModelForCausalLM
m = AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float32, **KW).eval()
ids = torch.arange(8).view(1, 8) + 3
with torch.no_grad():
    logits = m(ids).logits
out = dict(cls=type(m).__module__ + "." + type(m).__name__, impl=m.config._attn_implementation,
           finite=bool(torch.isfinite(logits).all()), shape=list(logits.shape))
if SAVE:
    torch.save(logits, SAVE)
if COMPARE:
    out["maxdiff_to_remote"] = float((logits - torch.load(COMPARE)).abs().max())
print("FORWARD", json.dumps(out), flush=True)
'''

_state: dict = {}


def _env(ctx) -> _venv.Venv:
    env = b.with_cpu_torch(ctx)
    if "env" not in _state:
        _state["env"] = env
        _venv.noted(ctx, env)
    return env


def _folder(ctx) -> str:
    if "folder" not in _state:
        env = _env(ctx)
        src = _downstream.tree(ctx, REPO, COMMIT, FILES) / "Phi-3-mini-4k-instruct"
        folder = _venv._tmp_root() / "phi3-tiny" / "phi3_tiny"
        res = _venv.run([env.python, "-c", PREP, str(src), str(folder)],
                        env=_venv.tool_env(VIRTUAL_ENV=str(env.path), PYTHONPATH=b.target_dir(ctx, REMOTE, env=env),
                                           HF_HUB_OFFLINE="1", HF_MODULES_CACHE=str(_venv._tmp_root() / "hf-modules-prep")),
                        cwd=_venv._tmp_root(), timeout=600)
        if "PREPARED" not in res.output:
            raise RuntimeError(f"could not write the tiny Phi-3 folder: {res.tail(800)}")
        ctx.note(f"{REPO} at {COMMIT[:7]}: Phi-3-mini-4k-instruct's remote code written into a tiny checkpoint folder "
                 f"(2 layers, width 64; random weights saved with {REMOTE} and the remote classes)")
        _state["folder"] = str(folder)
    return _state["folder"]


SILENCERS = {"": "", "verbosity": " after transformers.utils.logging.set_verbosity_error()",
             "modules": ' after logging.getLogger("transformers_modules").setLevel(logging.ERROR)'}


def _load(ctx, release: str, kw: dict, *, silence: str = "", compare: bool = False, tap: bool = True) -> _venv.Run:
    """from_pretrained(<tiny Phi-3 folder>, **kw) and a forward pass in a fresh child; its logits are saved
    (the remote code's, for fix 2), or compared with the remote code's when `compare`. With `tap` off,
    nothing is added to logging: what Python's last-resort handler writes to stderr is in the output."""
    key = (release, json.dumps(kw, sort_keys=True), silence, tap)
    if key not in _state:
        env, folder = _env(ctx), _folder(ctx)
        remote_logits = str(_venv._tmp_root() / "phi3-remote-logits.pt")
        if compare:
            _load(ctx, REMOTE, {"trust_remote_code": True})
        save = remote_logits if (release, kw, silence, tap) == (REMOTE, {"trust_remote_code": True}, "", True) else ""
        argv = [env.python, "-c", LOAD, folder, json.dumps(kw), silence, save, remote_logits if compare else "",
                "1" if tap else "0"]
        _state[key] = _venv.run(argv, env=_venv.tool_env(VIRTUAL_ENV=str(env.path), PYTHONPATH=b.target_dir(ctx, release, env=env),
                                                         HF_HUB_OFFLINE="1", HF_MODULES_CACHE=str(_venv._tmp_root() / "hf-modules")),
                                cwd=_venv._tmp_root(), timeout=600)
    res = _state[key]
    args = ", ".join(f"{k}={v!r}" for k, v in kw.items()) or "no trust_remote_code"
    seen = _logged(res) if tap else [line for line in res.output.splitlines() if "flash-atten" in line]
    ctx.note(f"{release}{SILENCERS[silence]}: from_pretrained(<tiny Phi-3 folder>, {args}){'' if tap else ' (no handler added)'}: "
             f"{'logged' if tap else 'output lines'} {seen}; forward: {_line(res, 'FORWARD ') or _venv.last_exception(res.output, 300)}")
    return res


def _line(res: _venv.Run, prefix: str) -> str | None:
    return next((line[len(prefix):] for line in res.output.splitlines() if line.startswith(prefix)), None)


def _after_mark(res: _venv.Run) -> list[tuple[str, str, str]]:
    after = res.output.split(MARK, 1)[-1] if MARK in res.output else ""
    out = []
    for line in after.splitlines():
        if line.startswith("ERRKB-LOG "):
            _, level, name, text = line.split(" ", 3)
            out.append((level, name, ast.literal_eval(text)))
    return out


def _logged(res: _venv.Run) -> list[str]:
    return [f"{level} {name}: {text[:160]}" for level, name, text in _after_mark(res) if "flash-atten" in text]


def _relog(res: _venv.Run) -> None:
    for level, name, text in _after_mark(res):
        logging.getLogger(name).log(getattr(logging, level, logging.WARNING), text)


def _forward(res: _venv.Run) -> dict:
    line = _line(res, "FORWARD ")
    if line is None:
        _venv.reraise(res.output)
        raise AssertionError(f"the model did not run: {res.tail(500)}")
    out = json.loads(line)
    if not out["finite"] or out["shape"] != [1, 8, 128]:
        raise AssertionError(f"unexpected forward result: {out}")
    return out


def _quiet(ctx, res: _venv.Run) -> dict:
    pattern = templates.search_regex(ctx.record["template"])
    hits = [f"{name}: {text}" for _, name, text in _after_mark(res) if pattern.search(text) or "window_size" in text]
    if hits:
        raise Refuted(f"still logged: {hits}")
    return _forward(res)


def reproduce(ctx):
    res = _load(ctx, REMOTE, {"trust_remote_code": True})
    names = {name for _, name, text in _after_mark(res) if "flash-atten" in text}
    ctx.note(f"logger(s) of the two lines: {sorted(names)}")
    ctx.expect_logged(LOGGER, _relog, res)


def fix_1(ctx):
    res = _load(ctx, REMOTE, {"trust_remote_code": True})
    out = ctx.call(_forward, res)
    ctx.note(f"the remote model ran its {out['impl']} attention ({out['cls']}) after the warning")


def fix_2(ctx):
    res = _load(ctx, BUILTIN, {}, compare=True)
    out = ctx.call(_quiet, ctx, res)
    if not out["cls"].startswith("transformers.models.phi3."):
        raise AssertionError(f"not the built-in Phi-3: {out}")
    ctx.close([out["maxdiff_to_remote"]], [0.0], atol=1e-4, what="built-in Phi-3 logits against the remote code's")


def fix_3(ctx):
    ctx.skip("flash-attn needs an Ampere or newer NVIDIA GPU")


def _untapped_quiet(ctx, res: _venv.Run) -> None:
    pattern = templates.search_regex(ctx.record["template"])
    if pattern.search(res.output.split(MARK, 1)[-1]):
        raise Refuted("the line still reaches stderr through Python's last-resort handler")


def fix_4(ctx):
    # the fix's first form, transformers' own verbosity, does not reach the remote module's logger: noted
    _load(ctx, REMOTE, {"trust_remote_code": True}, silence="verbosity")
    _load(ctx, REMOTE, {"trust_remote_code": True}, silence="verbosity", tap=False)
    res = _load(ctx, REMOTE, {"trust_remote_code": True}, silence="modules")
    ctx.call(_quiet, ctx, res)
    ctx.call(_untapped_quiet, ctx, _load(ctx, REMOTE, {"trust_remote_code": True}, silence="modules", tap=False))
