"""Qwen2.5-Omni's speech decoder logs "Qwen2_5OmniToken2WavModel must inference with fp32, but flash_attention_2
only supports fp16 and bf16, attention implementation of Qwen2_5OmniToken2WavModel will fallback to sdpa."
when it is built with FlashAttention-2.

What runs: transformers' own Qwen2_5OmniToken2WavModel, built the way Qwen2_5OmniForConditionalGeneration's
enable_talker builds it (the class called on the token2wav configuration, whose attention implementation
from_pretrained has set to flash_attention_2), from a small configuration made in code (a 2-layer DiT of width
64, a BigVGAN of 32 initial channels; no checkpoint). It runs in a child process with a CPU-only torch build
(2.13.0+cpu) and flash-attn 2.8.3's Python package importable (built without its CUDA part), which is what
transformers' FlashAttention availability check lets through on a CPU build (_tiny_llama.cpu_with_flash_attn).
The full Omni from_pretrained path is not run: on a machine without a GPU it stops at the device check.

Reproduce: transformers 4.52.4 (the first minor release with Qwen2.5-Omni) and 4.54.1 log the line and build
the DiT and BigVGAN with sdpa. 4.56.2 and 4.57.3 load the FlashAttention kernels while building any model with
that implementation, which stops a CPU before the line (noted; not a verdict). Fix 1 ("nothing to fix"): the line changes
only the two speech sub-models, which are built with sdpa; with attn_implementation="sdpa" (the caveat) the
same model logs nothing of the kind."""

from errkb import templates
from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _tiny_llama as llama

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
RELEASES = ("transformers==4.52.4", "transformers==4.54.1")
ELSEWHERE = ("transformers==4.56.2", "transformers==4.57.3")  # stop at the kernel import on a CPU; noted
LOGGER = "transformers"

BUILD = llama.LOG_TAP + r'''
import torch
from transformers.models.qwen2_5_omni.configuration_qwen2_5_omni import Qwen2_5OmniToken2WavConfig
from transformers.models.qwen2_5_omni.modeling_qwen2_5_omni import Qwen2_5OmniToken2WavModel
cfg = Qwen2_5OmniToken2WavConfig(
    dit_config=dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, head_dim=32, emb_dim=32,
                    look_ahead_layers=[1], look_backward_layers=[0], num_embeds=64),
    bigvgan_config=dict(upsample_initial_channel=32), attn_implementation="{impl}")
m = Qwen2_5OmniToken2WavModel(cfg)
m.float()
print("LOADED", m.config._attn_implementation, m.code2wav_dit_model.config._attn_implementation,
      m.code2wav_bigvgan_model.config._attn_implementation, next(m.parameters()).dtype, flush=True)
'''

_runs: dict = {}


def _build(ctx, rel, impl="flash_attention_2"):
    if (rel, impl) not in _runs:
        env, path = llama.cpu_with_flash_attn(ctx)
        res = b.run_with_torch(ctx, BUILD.replace("{impl}", impl), path=[b.target_dir(ctx, rel, env=env), *path],
                               env=env, extra_env={"HF_HUB_OFFLINE": "1"})
        ctx.note(f"{rel}: Qwen2_5OmniToken2WavModel(<small config, {impl}>): {llama.outcome(res)}")
        _runs[(rel, impl)] = res
    return _runs[(rel, impl)]


def _hits(ctx, res):
    finder = templates.search_regex(ctx.record["template"])
    return [m for m in llama.logged(res.output) if finder.search(m)]


def _loaded(res):
    line = [x.split() for x in res.output.splitlines() if x.startswith("LOADED ")]
    return line[-1][1:] if line else None


def reproduce(ctx):
    runs = {rel: _build(ctx, rel) for rel in RELEASES}
    for rel in ELSEWHERE:
        res = _build(ctx, rel)
        ctx.note(f"{rel} logged {[m[:80] for m in llama.logged(res.output)]}")
    llama.each_release(ctx, runs)
    ctx.expect_logged(LOGGER, llama.relog, runs[RELEASES[0]].output)


def fix_1(ctx):
    for rel in RELEASES:
        got = _loaded(_build(ctx, rel))
        if got is None or got[1:3] != ["sdpa", "sdpa"]:
            ctx.observed = {"class": None, "message": None, "release": rel, "loaded": got}
            raise Refuted(f"{rel}: the speech sub-models were not built with sdpa: {got}")
        ctx.note(f"{rel} with flash_attention_2: Token2Wav {got[0]}, DiT {got[1]}, BigVGAN {got[2]}, {got[3]}")
        res = _build(ctx, rel, "sdpa")
        if _hits(ctx, res):
            ctx.observed = {"class": "logging.WARNING", "message": _hits(ctx, res)[0], "release": rel}
            raise Refuted(f"{rel} logs the line with sdpa")
        if _loaded(res) is None:
            raise RuntimeError(f"{rel} did not build the model with sdpa: {llama.outcome(res)}")
        ctx.note(f"{rel} with sdpa logs no such line and builds: {_loaded(res)}")
