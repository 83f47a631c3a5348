"""transformers 4.36-4.51 refuses FlashAttention-2 when the device_map passed to from_pretrained is a dict
with a "cpu" or "disk" value: "... with a model dispatched on CPU or disk."

The check reads the map as passed, so a CPU decides it: a CPU-only torch build (2.13.0+cpu) with
flash-attn 2.8.3's Python package importable (built without its CUDA part; transformers' availability
check lets that through on a CPU build, verification/cases/_tiny_llama.py) and accelerate 0.34.2 (which
from_pretrained needs for a device_map; installed without its dependencies, which the environment has).
torch_dtype=torch.bfloat16, so the dtype check before it passes. Nothing faked or patched.

Reproduce: device_map={"model": "cpu", "lm_head": "cpu"} on 4.36.2 and 4.51.3 raises the message; the
notes add 4.57.3 (no such check). Fix 1 spreads the model over GPUs (not run). Fix 2: the same map with
attn_implementation="sdpa" loads on the CPU and matches eager."""

from verification.cases import _builds as b
from verification.cases import _tiny_llama as llama
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
RELEASES = ["transformers==4.36.2", "transformers==4.51.3"]
ACCELERATE = "accelerate==0.34.2"
MAP = 'device_map={"model": "cpu", "lm_head": "cpu"}'


def _env(ctx):
    env, path = llama.cpu_with_flash_attn(ctx)
    return env, [*path, b.target_dir(ctx, ACCELERATE, no_deps=True, env=env)]


def reproduce(ctx):
    env, path = _env(ctx)
    args = f'attn_implementation="flash_attention_2", torch_dtype=torch.bfloat16, {MAP}'
    runs = {rel: llama.load(ctx, rel, args, env=env, path=path) for rel in RELEASES}
    later = llama.load(ctx, "transformers==4.57.3", args.replace("torch_dtype", "dtype"), env=env, path=path)
    ctx.note(f"(not in the record's range) transformers==4.57.3: {llama.outcome(later)}")
    llama.each_release(ctx, runs)
    ctx.expect_error(_venv.reraise, runs[RELEASES[-1]].output, ctx.record["template"])


def fix_1(ctx):
    ctx.skip("keeps every module on GPUs (device_map=\"auto\" with max_memory per GPU): needs GPUs")


def fix_2(ctx):
    env, path = _env(ctx)
    llama.sdpa_matches_eager(ctx, RELEASES[0], env=env, path=path, sdpa_args=MAP)
