"""vLLM 0.6.2 (V0 engine) with an FP8 KV cache: the selector logs INFO "Cannot use FlashAttention-2 backend
for FP8 KV cache." (and a WARNING suggesting VLLM_ATTENTION_BACKEND=FLASHINFER) and builds the layer on
xFormers.

On the CPU with the release's wheel and pinned torch/xformers (verification/cases/vllm/_vllm_v0.py; NVML
answers as one SM90 device, noted). Each step builds vLLM's own Attention layer (32 query heads, 8 KV heads,
head size 128, fp16 default dtype) under a CacheConfig with the KV-cache dtype given.

reproduce: cache_dtype "fp8": the INFO line on vllm.attention.selector; the layer gets XFormersImpl.
fix_1: VLLM_ATTENTION_BACKEND=FLASHINFER with cache_dtype "fp8": no line, the layer gets FlashInferImpl
(vLLM 0.6.2 imports FlashInfer lazily; running its kernels needs flashinfer 0.1.x, whose wheels are on
flashinfer.ai, and a GPU: not run).
control: cache_dtype "auto": no line, the layer gets FlashAttentionImpl (the compiled module loads)."""

from verification.cases.vllm import _vllm_v0 as v0

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
LAYER = dict(dtype="float16", **v0.HEADS)


def reproduce(ctx):
    got, res = v0.run(ctx, kv_cache_dtype="fp8", **LAYER)
    v0.expect_line(ctx, res)


def fix_1(ctx):
    got, res = v0.run(ctx, kv_cache_dtype="fp8", extra_env={"VLLM_ATTENTION_BACKEND": "FLASHINFER"}, **LAYER)
    v0.quiet(ctx, got, res, "FlashInferImpl")


def control(ctx):
    got, res = v0.run(ctx, kv_cache_dtype="auto", **LAYER)
    v0.quiet(ctx, got, res, "FlashAttentionImpl")
