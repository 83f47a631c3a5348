"""ms-swift training with --packing true (or --padding_free true) and an attention implementation that
is not FlashAttention: 'The "packing" feature requires a flash attention implementation. ...'.

ms-swift 3.7.0 (PyPI; the first release with the check) installed by uv 0.9.0 with its dependencies,
PyPI's torch 2.5.1 and transformers 4.55.4 (the newest its pin allows), Python 3.11, no GPU, flash-attn not
installed. The steps run `swift sft`'s own entry (`python -m swift.cli.sft`, what the `swift sft` command
runs) on the two-layer Llama and word-level tokenizer of _tiny_llama.py, saved to a folder, and a small
local jsonl dataset, HF_HUB_OFFLINE=1.

Reproduce: --packing true with the default attn_impl raises the record's ValueError from
swift/llm/argument/train_args.py's __post_init__, before the model is loaded; --padding_free true with
--attn_impl sdpa raises it for "padding_free". Fix 1: with --attn_impl flash_attn the arguments are
accepted (swift logs them) and the run goes on to load the model, where transformers then asks for the
flash_attn package (not installed here: installing it needs a CUDA build and an Ampere+ GPU; noted).
Fix 2: without --packing the arguments are accepted (the run is stopped once swift logs them)."""

from verification.cases import _builds as b
from verification.cases import _tiny_llama as llama
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
REQUIREMENTS = ("ms-swift==3.7.0", "torch==2.5.1", "transformers==4.55.4")
ACCEPTED = r"\[INFO:swift\] args: TrainArguments\("
DATA = '{"messages": [{"role": "user", "content": "w3 w4 w5"}, {"role": "assistant", "content": "w6 w7"}]}\n'


def _env(ctx):
    tool, env = b.uv_env(ctx, "ms-swift-3.7.0", *REQUIREMENTS)
    ctx.note("installed: " + ", ".join(f"{d} {env.version(d)}" for d in ("ms-swift", "torch", "transformers", "flash-attn")))
    return env


def _inputs(ctx, env):
    folder = _venv._tmp_root() / "ms-swift-inputs"
    if not (folder / "model" / "config.json").exists():
        folder.mkdir(exist_ok=True)
        made = env.python_run(llama.MODEL.replace("tempfile.mkdtemp()", repr(str(folder / "model"))) + llama.TOKENIZER)
        if not (folder / "model" / "config.json").exists():
            raise RuntimeError(f"could not save the tiny Llama: {made.tail(400)}")
        (folder / "data.jsonl").write_text(DATA * 8)
    return folder


def _sft(ctx, *args: str, stop_at: str | None = None) -> _venv.Run:
    env = _env(ctx)
    folder = _inputs(ctx, env)
    argv = [env.python, "-m", "swift.cli.sft", "--model", folder / "model", "--model_type", "llama", "--dataset",
            folder / "data.jsonl", "--max_steps", "1", "--output_dir", folder / "out", *args]
    res = _venv.run(argv, env=_venv.tool_env(VIRTUAL_ENV=str(env.path), HF_HUB_OFFLINE="1"), cwd=folder, timeout=600,
                    stop_at=stop_at)
    accepted = "the arguments were accepted" if "args: TrainArguments(" in res.output else "no arguments logged"
    ctx.note(f"swift sft ... {' '.join(args)}: {accepted}; " + _venv.last_exception(res.output, 300)
             + (" (stopped once swift logged its arguments)" if res.stopped else ""))
    return res


def reproduce(ctx):
    res = _sft(ctx, "--packing", "true")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])
    free = _sft(ctx, "--padding_free", "true", "--attn_impl", "sdpa")
    ctx.expect_error(_venv.reraise, free.output, ctx.record["template"])


def _accepted(res, template):
    """The record's message is not printed, and swift logged the arguments it accepted."""
    _venv.reraise(res.output, template)
    if "args: TrainArguments(" not in res.output:
        raise AssertionError(f"swift did not get past its arguments: {res.tail(500)}")


def fix_1(ctx):
    res = _sft(ctx, "--packing", "true", "--attn_impl", "flash_attn")
    ctx.call(_accepted, res, ctx.record["template"])


def fix_2(ctx):
    res = _sft(ctx, stop_at=ACCEPTED)
    ctx.call(_accepted, res, ctx.record["template"])
