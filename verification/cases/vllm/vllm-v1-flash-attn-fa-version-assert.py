"""vLLM 0.7.2 with VLLM_USE_V1=1 on a Turing GPU (compute capability 7.5): building the attention layer stops on
a bare `assert is_fa_version_supported(self.fa_version)` in V1's FlashAttentionImpl, after ERROR "Cannot use FA
version 2 is not supported due to ...".

On the CPU with vLLM 0.7.2's wheel and its pinned torch 2.5.1 and xformers 0.0.28.post3
(verification/cases/vllm/_vllm_v0.py): vllm._C and the bundled FlashAttention extensions _vllm_fa2_C/_vllm_fa3_C
load for real with a stub CUDA 12.4 driver library (nothing is called on it); NVML and
torch.cuda.get_device_capability answer the step's compute capability (vLLM's platform asks NVML, the bundled
vllm_flash_attn asks torch), noted. Each step builds vLLM's own Attention layer (32 query heads, 8 KV heads, head
size 128, fp16 default dtype, KV cache "auto"), as every model's attention module does; the assertion is judged
by the statement Python prints above the bare AssertionError.

reproduce: 7.5, VLLM_USE_V1=1: the bare AssertionError at the record's statement (the ERROR line before it is
noted, with the reason 0.7.2 gives for version 2).
fix_1: VLLM_USE_V1=0 on 7.5: the V0 selector sends the layer to xFormers (XFormersImpl), no assertion.
fix_2: VLLM_FLASH_ATTN_VERSION=3 on 8.9 (L4/RTX 4090) under V1 stops on the same assertion; with the variable
unset the layer is built (FlashAttentionImpl, fa_version 2).
fix_3 ("0.10.2 or newer", V1 on these GPUs through FlexAttention): vLLM 0.11.0's wheel (its pinned torch 2.8.0,
vllm._C and _vllm_fa2_C loading with a stub CUDA 12.8 driver library) on 7.5 with VLLM_USE_V1=1: the engine
configuration is made for V1 and vLLM's selector picks FLEX_ATTENTION for the layer (no FlashAttention backend is
built, so no assertion).
fix_4 (Ampere or newer, reinstall vLLM): on 8.0 with the tree missing _vllm_fa2_C (a build whose extension does
not import) the same assertion stops the layer; the whole wheel builds it (FlashAttentionImpl, fa_version 2)."""

from errkb.verify.case import Refuted
from verification.cases import _venv
from verification.cases.vllm import _vllm_v0 as v0

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
RELEASE = "0.7.2"
STATEMENT = "assert is_fa_version_supported(self.fa_version)"
LAYER = dict(mode="layer", dtype="float16", kv_cache_dtype="auto", **v0.HEADS,
             impl_attrs=["fa_version"])
FA2_SO = "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so"


def _layer(ctx, cap, drop=(), **env):
    got, res = v0.run_code(ctx, RELEASE, v0.LAYER, cap=cap, torch_cap=True, drop=drop, extra_env=env, **LAYER)
    v0.described(ctx, RELEASE, got, res, f"Attention layer on {cap[0]}.{cap[1]}"
                 + (f" without {', '.join(drop)}" if drop else ""), extra_env=env,
                 loggers=("vllm.attention", "vllm.platforms", "vllm.v1.attention"))
    return got


def _asserts(got, where):
    if not (got["raised"] and got["raised"][0] == "AssertionError" and got["raised"][1] == STATEMENT):
        raise Refuted(f"{where}: the layer did not stop on the record's assertion: {got['raised']}")


def _fa(got, version):
    v0.built(got, "FlashAttentionImpl")
    if got["impl_attrs"]["fa_version"] != version:
        raise AssertionError(f"fa_version {got['impl_attrs']['fa_version']}, not {version}")


def reproduce(ctx):
    got = _layer(ctx, (7, 5), VLLM_USE_V1="1")
    ctx.expect_error(_venv.raise_reported, got)


def fix_1(ctx):
    got = _layer(ctx, (7, 5), VLLM_USE_V1="0")
    ctx.call(v0.built, got, "XFormersImpl")


def fix_2(ctx):
    _asserts(_layer(ctx, (8, 9), VLLM_USE_V1="1", VLLM_FLASH_ATTN_VERSION="3"), "8.9 with VLLM_FLASH_ATTN_VERSION=3")
    ctx.call(_fa, _layer(ctx, (8, 9), VLLM_USE_V1="1"), 2)


def fix_3(ctx):
    v0.v1_flex_before_ampere(ctx)


def fix_4(ctx):
    _asserts(_layer(ctx, (8, 0), drop=(FA2_SO,), VLLM_USE_V1="1"), "8.0 without _vllm_fa2_C")
    ctx.call(_fa, _layer(ctx, (8, 0), VLLM_USE_V1="1"), 2)
