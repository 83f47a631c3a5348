"""TRL's SFTTrainer (0.16.1-1.15.0) warns "Padding-free training is enabled, but the attention
implementation is not set to ..." when padding-free batches are on and the model's attention
implementation is not one of the FlashAttention names it trusts.

Environment: a new virtual environment with torch 2.13.0+cpu (local wheel) and trl 1.15.0 with what pip
resolves for it (accelerate 1.16.0, datasets 5.2.0, transformers 5.25.0 on 2026-12-07). A tiny Llama
saved from a config made in code, a word-level tokenizer made in code and a two-row text dataset: nothing
from the Hub (HF_HUB_OFFLINE=1). The logger 'trl' is tapped; only SFTTrainer is built, no training step.

Reproduce: SFTTrainer with SFTConfig(packing=True) (whose default 'bfd' strategy turns padding-free on)
on the model loaded with attn_implementation="sdpa" logs the record's warning at WARNING (through
accelerate's logger, which puts '[RANK 0] ' in front). Fix 1 (a FlashAttention implementation) needs
flash-attn or a hub kernel on an NVIDIA GPU and fix 2 (TRL >= 1.13.0 with a revision-pinned hub kernel)
loads a hub kernel: both skipped. Fix 3: SFTConfig(packing=False, padding_free=False) builds the trainer
without the warning, and padding-free is off."""

from verification.cases import _builds as b
from verification.cases import _venv
from verification.cases import _tiny_llama as llama

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
TRL = "trl==1.15.0"
LOGGER = "trl"

CHILD = llama.log_tap("trl") + llama.MODEL + llama.TOKENIZER + r'''
from datasets import Dataset
from trl import SFTConfig, SFTTrainer
tk = PreTrainedTokenizerFast.from_pretrained(folder)
m = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="sdpa")
ds = Dataset.from_dict({"text": ["w3 w4 w5", "w6 w7 w8 w9 w10"]})
args = SFTConfig(output_dir=tempfile.mkdtemp(), report_to=[], use_cpu=True, max_length=32, @ARGS@)
t = SFTTrainer(model=m, args=args, train_dataset=ds, processing_class=tk)
print("BUILT", t.padding_free, m.config._attn_implementation, flush=True)
import importlib.metadata as md
print("VERSIONS", " ".join(f"{d} {md.version(d)}" for d in ("trl", "transformers", "accelerate", "datasets")), flush=True)
'''


def _run(ctx, args: str) -> _venv.Run:
    env = _venv.venv(ctx, "cpu-torch-" + TRL.replace("==", "-"), pip=b.PIP, install=[*b.cpu_torch_requirement(), TRL])
    _venv.noted(ctx, env)
    res = env.python_run(CHILD.replace("@ARGS@", args), HF_HUB_OFFLINE="1", timeout=600)
    ctx.note(f"SFTConfig({args}): " + next((line for line in res.output.splitlines() if line.startswith("BUILT ")),
                                             _venv.last_exception(res.output, 300)))
    ctx.note(next((line for line in res.output.splitlines() if line.startswith("VERSIONS ")), "versions not printed"))
    return res


def reproduce(ctx):
    res = _run(ctx, "packing=True")
    _venv.finished(res, "BUILT True sdpa", "SFTTrainer with packing on an SDPA model")
    ctx.expect_logged(LOGGER + ".trainer.sft_trainer", llama.relog, res.output)


def fix_1(ctx):
    ctx.skip("loads the model with flash_attention_2 or a kernels-community FlashAttention hub kernel on an NVIDIA GPU")


def fix_2(ctx):
    ctx.skip("loads a revision-pinned FlashAttention hub kernel (kernels package, Hub access)")


def fix_3(ctx):
    res = _run(ctx, "packing=False, padding_free=False")

    def plain():
        hits = [t for t in llama.logged(res.output) if _venv.tool_message(t, ctx.record["template"])]
        if hits:
            raise _venv.ToolMessage(hits[0])
        _venv.reraise(res.output)
        _venv.finished(res, "BUILT False sdpa", "SFTTrainer without padding-free")

    ctx.call(plain)
