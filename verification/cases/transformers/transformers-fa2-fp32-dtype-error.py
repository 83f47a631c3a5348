"""transformers 4.36.x refuses FlashAttention-2 with torch_dtype=torch.float32: "Flash Attention 2.0 only
supports torch.float16 and torch.bfloat16 dtypes. You passed torch.float32, ...".

The check is reached on a CPU: in 4.36.2 the availability check raises only for CUDA or ROCm builds of
torch, so with a CPU-only torch build (2.13.0+cpu) and flash-attn 2.8.3's Python package importable
(built without its CUDA part) from_pretrained goes on to the dtype check (verification/cases/_tiny_llama.py;
nothing faked or patched). Reproduce: 4.36.2 raises the message; the notes add 4.37.2, where the same
load only logs it (the warning record). Fix 1: torch_dtype=torch.bfloat16 gets past the dtype check: the
load then stops at the next check, the one for a GPU (the no-GPU record's message), which follows the
dtype check in 4.36.2's _check_and_enable_flash_attn_2; loading and running on a GPU is not checked here.
Fix 2: attn_implementation="sdpa" with torch_dtype=torch.float32 loads and matches eager."""

from verification.cases import _tiny_llama as llama
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
RELEASE = "transformers==4.36.2"
NO_GPU = "with a model not initialized on GPU and with no GPU available"


def reproduce(ctx):
    env, path = llama.cpu_with_flash_attn(ctx)
    res = llama.load(ctx, RELEASE, 'attn_implementation="flash_attention_2", torch_dtype=torch.float32', env=env, path=path)
    later = llama.load(ctx, "transformers==4.37.2", 'attn_implementation="flash_attention_2", torch_dtype=torch.float32',
                       env=env, path=path)
    ctx.note(f"4.37.2 logged: {[m[:90] for m in llama.logged(later.output)]}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    env, path = llama.cpu_with_flash_attn(ctx)
    res = llama.load(ctx, RELEASE, 'attn_implementation="flash_attention_2", torch_dtype=torch.bfloat16', env=env, path=path)

    def past_dtype_check():
        _venv.reraise(res.output, ctx.record["template"])
        if NO_GPU not in res.output:
            raise AssertionError(f"the load did not reach the device check: {llama.outcome(res)}")
        ctx.note("the dtype check passed; the device check after it stops the load on this GPU-less machine")

    ctx.call(past_dtype_check)


def fix_2(ctx):
    env, path = llama.cpu_with_flash_attn(ctx)
    llama.sdpa_matches_eager(ctx, RELEASE, env=env, path=path)
