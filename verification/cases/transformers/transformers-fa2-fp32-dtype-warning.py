"""transformers 4.37+ logs "Flash Attention 2 only supports torch.float16 and torch.bfloat16 dtypes, but the
current dype in ... is torch.float32 ..." when FlashAttention is requested for a float32 model.

Reached on a CPU: with a CPU-only torch build (2.13.0+cpu) and flash-attn 2.8.3's Python package
importable (built without its CUDA part), transformers 4.37.2-4.57.3 pass their availability check and log
the dtype warning before the load stops at a later check (4.37.2-4.51.3: the device check, "... no GPU
available"; 4.57.3: loading the kernels, "Could not find the currently requested flash attention
implementation"); see verification/cases/_tiny_llama.py. Nothing faked or patched.

Reproduce: torch_dtype=torch.float32 (4.37.2, 4.46.3, 4.51.3) and dtype=torch.float32 (4.57.3) each log
the message; the notes add 5.25.0, whose availability check refuses a CPU before this warning. Fix 1: the
same loads with bfloat16 log no such warning (each load then stops at the later check above: running the
model needs a GPU). Fix 2 (autocast in the forward pass) needs flash-attn's CUDA kernels and a GPU."""

from errkb.verify.case import Refuted
from verification.cases import _tiny_llama as llama

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
# release: the dtype keyword it takes (4.57.3 renamed torch_dtype to dtype)
RELEASES = {"transformers==4.37.2": "torch_dtype", "transformers==4.46.3": "torch_dtype",
            "transformers==4.51.3": "torch_dtype", "transformers==4.57.3": "dtype"}
LOGGER = "transformers"


def _load(ctx, rel, dtype_kw, dtype):
    env, path = llama.cpu_with_flash_attn(ctx)
    return llama.load(ctx, rel, f'attn_implementation="flash_attention_2", {dtype_kw}=torch.{dtype}', env=env, path=path)


def reproduce(ctx):
    runs = {rel: _load(ctx, rel, kw, "float32") for rel, kw in RELEASES.items()}
    env, path = llama.cpu_with_flash_attn(ctx)
    later = llama.load(ctx, "transformers==5.25.0", 'attn_implementation="flash_attention_2", dtype=torch.float32',
                       env=env, path=path)
    ctx.note(f"5.25.0 logged: {[m[:90] for m in llama.logged(later.output)]}")
    llama.each_release(ctx, runs)
    last = runs["transformers==4.57.3"]
    ctx.expect_logged(LOGGER, llama.relog, last.output)


def fix_1(ctx):
    runs = {rel: _load(ctx, rel, kw, "bfloat16") for rel, kw in RELEASES.items()}
    from errkb import templates

    for rel, res in runs.items():
        hits = [m for m in llama.logged(res.output) if templates.search_regex(ctx.record["template"]).search(m)]
        if hits:
            ctx.observed = {"class": "logging.WARNING", "message": hits[0], "release": rel}
            raise Refuted(f"{rel} still logs the warning with bfloat16")
        if "LOADED" not in res.output and "ModuleNotFoundError" in res.output:
            raise RuntimeError(f"{rel} did not import here: {llama.outcome(res)}")
    ctx.note("no release logged the warning with bfloat16; each load then stopped at the later check noted above")


def fix_2(ctx):
    ctx.skip("the cast under autocast happens in the flash forward pass, which needs flash-attn's CUDA kernels and a GPU")
