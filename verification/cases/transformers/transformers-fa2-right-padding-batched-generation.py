"""transformers 4.36.2's Mistral under FlashAttention-2 refuses a right-padded batch whenever the KV
cache is on: "You are attempting to perform batched generation with padding_side='right' ...".

The guard sits in MistralModel.forward, before any attention kernel, so it is reached on a CPU: a
two-layer Mistral built from a config that asks for flash_attention_2 (4.36.2's config keyword), in
bfloat16 (the dtype check of 4.36.2 runs when the model is built), in _tiny_llama's environment: a
CPU-only torch (2.13.0+cpu) with flash-attn 2.8.3's Python package importable, built without its
CUDA part. Nothing is patched. Reproduce: a batch whose second row ends in padding, with
use_cache=True, raises the record's message. Fixes 1 and 2 (left padding; use_cache=False) get past
the guard: the forward then reaches MistralFlashAttention2 and stops there on this machine (4.36.2
names `_flash_supports_window_size` only when flash-attn's kernels import), so only that much is
claimed here. Fix 4: 4.36.2's Mistral refuses attn_implementation="sdpa" (its SDPA path came
later; the first run of this case found it, and the fix now says so), so the step uses 4.41.2,
which still has the guard for flash_attention_2: with "sdpa" the same right-padded batch runs and
its logits at the real tokens match eager's."""

from verification.cases import _builds as b
from verification.cases import _tiny_llama as llama
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
RELEASE = "transformers==4.36.2"
SDPA_RELEASE = "transformers==4.41.2"  # 4.36.x's Mistral has no SDPA path (it refuses attn_implementation="sdpa")

MODEL = r'''
import torch
from transformers import MistralConfig, MistralForCausalLM
IMPL, LEFT, CACHE = "IMPLEMENTATION", PAD_LEFT, USE_CACHE
torch.set_default_dtype(torch.bfloat16 if IMPL == "flash_attention_2" else torch.float32)
cfg = MistralConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                    pad_token_id=0, attn_implementation=IMPL)
torch.manual_seed(0)
model = MistralForCausalLM(cfg).eval()
print("implementation", model.config._attn_implementation, flush=True)
ids = torch.randint(1, 128, (2, 8))
mask = torch.ones(2, 8, dtype=torch.long)
if LEFT:
    mask[1, :3] = 0
else:
    mask[1, -3:] = 0
with torch.no_grad():
    logits = model(input_ids=ids, attention_mask=mask, use_cache=CACHE).logits
real = mask.bool()
print("LOGITS", logits[real].float().flatten()[:64].tolist(), flush=True)
'''


def _forward(ctx, implementation="flash_attention_2", left=False, cache=True, release=RELEASE):
    env, path = llama.cpu_with_flash_attn(ctx)
    code = (MODEL.replace("IMPLEMENTATION", implementation).replace("PAD_LEFT", str(left))
            .replace("USE_CACHE", str(cache)))
    res = b.run_with_torch(ctx, code, path=[b.target_dir(ctx, release, env=env), *path], env=env)
    ctx.note(f"{release}, {implementation}, {'left' if left else 'right'} padding, use_cache={cache}: "
             + ("ran" if res.returncode == 0 else _venv.last_exception(res.output, 160)))
    return res


def _past_the_guard(ctx, res):
    def check():
        if "implementation flash_attention_2" not in res.output:
            raise AssertionError(f"the model was not built with flash_attention_2: {res.tail(300)}")
        _venv.reraise(res.output, ctx.record["template"])  # the record's message refutes
        if res.returncode != 0 and "flash" not in _venv.last_exception(res.output).lower():
            raise AssertionError(f"the forward stopped before the attention layer: {res.tail(300)}")
    ctx.call(check)


def reproduce(ctx):
    res = _forward(ctx)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    _past_the_guard(ctx, _forward(ctx, left=True))


def fix_2(ctx):
    _past_the_guard(ctx, _forward(ctx, cache=False))


def fix_4(ctx):
    runs = {impl: _forward(ctx, implementation=impl, release=SDPA_RELEASE) for impl in ("sdpa", "eager")}
    values = {}
    for impl, res in runs.items():
        if f"implementation {impl}" not in res.output:
            ctx.call(_venv.finished, res, f"implementation {impl}", f"the {impl} model")
        line = ctx.call(_venv.printed, res, "LOGITS")
        values[impl] = [float(x) for x in line[len("LOGITS "):].strip("[]").split(",")]
    ctx.close(values["sdpa"], values["eager"], atol=1e-4, what="sdpa logits against eager at the real tokens")
