"""A two-layer Llama saved from a config made in code (no Hub), loaded in a child process with
one transformers release: the model the "FlashAttention package not installed" cases load, once
with the attention implementation the record is about and once with SDPA against eager.

`load` runs any from_pretrained call on it and prints what transformers logged (`relog` logs it
again in the worker, for ctx.expect_logged); `cpu_with_flash_attn` is the environment of the
FlashAttention device and dtype checks: a CPU-only torch build with flash-attn's Python package
(no CUDA build) importable, which is what transformers' availability check lets through on a
CPU build of torch."""

import ast
import logging

from verification.cases import _builds as b
from verification.cases import _venv

FLASH_ATTN = "2.8.3"

MODEL = r'''
import tempfile, torch
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM
cfg = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
torch.manual_seed(0)
folder = tempfile.mkdtemp()
LlamaForCausalLM(cfg).save_pretrained(folder)
'''

SDPA_AGAINST_EAGER = MODEL + r'''
ids = torch.randint(0, 128, (1, 16))
out = {}
for impl in ("sdpa", "eager"):
    m = AutoModelForCausalLM.from_pretrained(folder, attn_implementation=impl, torch_dtype=torch.float32)
    out[impl] = m(ids).logits
print("MAXDIFF", float((out["sdpa"] - out["eager"]).abs().max()))
'''


# prints every record the "transformers" logger handles as one line (installed before the import)
LOG_TAP = r'''
import logging
class _ErrkbTap(logging.Handler):
    def emit(self, record):
        print("ERRKB-LOG", record.levelname, record.name, repr(record.getMessage()), flush=True)
logging.getLogger("transformers").addHandler(_ErrkbTap())
'''


def outcome(res: _venv.Run) -> str:
    loaded = [line for line in res.output.splitlines() if line.startswith("LOADED ")]
    if loaded:
        return "loaded (" + loaded[-1][7:] + ")"
    causes = _venv.exception_lines(res.output)
    return f"{causes[-1][0]}: {causes[-1][1][:300]}" if causes else res.summary()


def load(ctx, transformers: str, args: str, *, env=None, path=(), after: str = "") -> _venv.Run:
    """`AutoModelForCausalLM.from_pretrained(<tiny Llama folder>, <args>)` in a child process run by
    `env`'s Python (with_torch()'s by default), with `transformers` (a requirement, installed with
    pip --target) and then `path` in front; `after` runs on the loaded model `m`."""
    code = (LOG_TAP + MODEL + f"m = AutoModelForCausalLM.from_pretrained(folder, {args})\n"
            "print('LOADED', m.config._attn_implementation, m.dtype, next(m.parameters()).device, flush=True)\n" + after)
    res = b.run_with_torch(ctx, code, path=[b.target_dir(ctx, transformers, env=env), *path], env=env,
                           extra_env={"HF_HUB_OFFLINE": "1"})
    ctx.note(f"{transformers}: from_pretrained(<tiny Llama folder>, {args}): {outcome(res)}")
    return res


def relog(output: str) -> None:
    """Log again, in this process, each line the child's LOG_TAP printed."""
    for line in output.splitlines():
        if line.startswith("ERRKB-LOG "):
            _, level, name, text = line.split(" ", 3)
            logging.getLogger(name).log(getattr(logging, level, logging.WARNING), ast.literal_eval(text))


def logged(output: str) -> list[str]:
    return [ast.literal_eval(line.split(" ", 3)[3]) for line in output.splitlines() if line.startswith("ERRKB-LOG ")]


def each_release(ctx, runs: dict, *, logged_too: bool = False) -> None:
    """Every run in `runs` ({release: Run}) printed the record's message (raised, or logged too when
    `logged_too`); a release where the load stopped otherwise refutes, one where the child could not
    run transformers at all is an error of the case."""
    from errkb.verify.case import Refuted

    template = ctx.record["template"]
    missing = {}
    for rel, res in runs.items():
        if _venv.tool_message(res.output, template):
            continue
        if any(cls == "ModuleNotFoundError" for cls, _ in _venv.exception_lines(res.output)[-1:]):
            raise RuntimeError(f"{rel} did not import here: {outcome(res)}")
        missing[rel] = outcome(res)
    if missing:
        ctx.observed = {"class": None, "message": None, "instead": missing}
        raise Refuted(f"no such message from {', '.join(missing)}")


def cpu_with_flash_attn(ctx):
    """(environment, extra path): b.with_cpu_torch() and flash-attn FLASH_ATTN's Python package (its
    sdist built with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE in that environment, installed with pip
    --target), so importlib finds flash_attn and its version while torch.version.cuda is None."""
    env = b.with_cpu_torch(ctx)
    _venv.noted(ctx, env)
    wheel = b.flash_attn_python_wheel(ctx, FLASH_ATTN, env=env)
    return env, [b.target_dir(ctx, wheel, no_deps=True, env=env)]


def cuda_torch_without_gpu(ctx, torch: str = "torch==2.14.1"):
    """An environment made by uv with PyPI's CUDA build of torch (it imports on this machine, which
    has no GPU): the other side of the checks that read torch.version.cuda."""
    tool, env = b.uv_env(ctx, "cuda-" + torch.replace("=", "-"), torch, "numpy")
    return env


def expect_refusal(ctx, transformers: str, implementation: str) -> None:
    """Loading the model with `implementation` raises the record's message."""
    code = MODEL + f'AutoModelForCausalLM.from_pretrained(folder, attn_implementation="{implementation}")'
    res = b.run_with_torch(ctx, code, path=[b.target_dir(ctx, transformers)])
    ctx.note(res.summary())
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def sdpa_matches_eager(ctx, transformers: str, *, env=None, path=(), sdpa_args: str = "") -> None:
    """The same model loads with attn_implementation="sdpa" (and `sdpa_args`, e.g. a device_map),
    without the record's message, and its logits match the eager implementation's."""
    code = SDPA_AGAINST_EAGER
    if sdpa_args:
        code = code.replace('attn_implementation=impl,', f'attn_implementation=impl, **(dict({sdpa_args}) if impl == "sdpa" else {{}}),')
        ctx.note(f"sdpa loaded with {sdpa_args}")
    res = b.run_with_torch(ctx, code, path=[b.target_dir(ctx, transformers, env=env), *path], env=env,
                           extra_env={"HF_HUB_OFFLINE": "1"})
    ctx.note(res.summary())

    diff = ctx.call(logit_diff, ctx, res)
    ctx.close([diff], [0.0], atol=1e-4, what="sdpa logits against eager")


def logit_diff(ctx, res) -> float:
    """The MAXDIFF that SDPA_AGAINST_EAGER printed; the record's message (or any other exception)
    the run printed instead is raised, so that ctx.call refutes on it."""
    _venv.reraise(res.output, ctx.record["template"])
    _venv.reraise(res.output)
    diff = [float(line.split()[1]) for line in res.output.splitlines() if line.startswith("MAXDIFF")]
    if not diff:
        raise AssertionError(res.tail(600))
    return diff[0]


# ---------------------------------------------------------------- LLaMA-Factory's loading path

# a word-level tokenizer for the tiny Llama, made in code and saved next to it: LLaMA-Factory's
# load_model registers the tokenizer's auto classes, so its loading path needs one
TOKENIZER = r'''
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
_tok = Tokenizer(models.WordLevel({f"w{i}": i for i in range(128)}, unk_token="w0"))
_tok.pre_tokenizer = pre_tokenizers.Whitespace()
PreTrainedTokenizerFast(tokenizer_object=_tok, unk_token="w0", pad_token="w1", eos_token="w2").save_pretrained(folder)
'''


def log_tap(*names: str) -> str:
    """LOG_TAP for other loggers: every record the named loggers (and their children) handle is
    printed as one ERRKB-LOG line."""
    return LOG_TAP.replace('logging.getLogger("transformers").addHandler(_ErrkbTap())',
                           "".join(f"logging.getLogger({n!r}).addHandler(_ErrkbTap())\n" for n in names))


def factory_load(ctx, env: _venv.Venv, package: str, args: dict) -> _venv.Run:
    """LLaMA-Factory's own inference loading path on the tiny Llama (with TOKENIZER), in a child run by
    `env`'s Python: `<package>.hparams.get_infer_args(args + the model folder + template "default")`,
    `load_tokenizer`, then `load_model(tokenizer, model_args, finetuning_args, is_trainable=False)`,
    and one forward pass. `package` is llmtuner or llamafactory; its logger and transformers' are tapped."""
    code = (log_tap(package, "transformers") + MODEL + TOKENIZER +
            f"from {package}.hparams import get_infer_args\nfrom {package}.model import load_model, load_tokenizer\n"
            f"model_args, data_args, finetuning_args, _ = get_infer_args(dict(model_name_or_path=folder, template='default', **{args!r}))\n"
            "tok = load_tokenizer(model_args)\ntok = tok['tokenizer'] if isinstance(tok, dict) else tok\n"
            "m = load_model(tok, model_args, finetuning_args, is_trainable=False)\n"
            "print('LOADED', m.config._attn_implementation, m.dtype, next(m.parameters()).device, flush=True)\n"
            "print('FORWARD', tuple(m(torch.randint(0, 128, (1, 16))).logits.shape), flush=True)\n")
    res = env.python_run(code, HF_HUB_OFFLINE="1", timeout=600)
    ctx.note(f"{package}: get_infer_args({args}) + load_model on the tiny Llama: {outcome(res)}")
    return res


def factory_warns(ctx, env: _venv.Venv, package: str, args: dict) -> None:
    """The reproduce step of a LLaMA-Factory warning record: with flash-attn absent (noted), loading
    with `args` must log the record's warning under `package`, and the load must go on."""
    ctx.note(env.python_run("import importlib.util as u; print('flash_attn findable:', u.find_spec('flash_attn') is not None)")
             .output.strip())
    res = factory_load(ctx, env, package, args)
    ctx.expect_logged(package, relog, res.output)
    ctx.note(f"then the load went on with transformers' own choice: {factory_loaded(res)}")


def factory_loaded(res: _venv.Run, implementation: str | None = None) -> str:
    """factory_load's model loaded and ran a forward pass (with `implementation`, when given);
    returns the implementation it loaded with."""
    lines = res.output.splitlines()
    loaded = [line.split() for line in lines if line.startswith("LOADED ")]
    if not loaded or not any(line.startswith("FORWARD ") for line in lines):
        raise AssertionError(f"the model did not load and run: {outcome(res)}")
    if implementation is not None and loaded[-1][1] != implementation:
        raise AssertionError(f"loaded with {loaded[-1][1]}, not {implementation}")
    return loaded[-1][1]
