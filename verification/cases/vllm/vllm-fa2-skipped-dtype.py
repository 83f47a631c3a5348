"""vLLM 0.6.2 (V0 engine) with a float32 model: the selector logs INFO "Cannot use FlashAttention-2 backend
for dtype other than torch.float16 or torch.bfloat16." and builds the layer on xFormers.

On the CPU with the release's wheel and pinned torch/xformers (verification/cases/vllm/_vllm_v0.py; NVML
answers as one SM90 device, noted). Each step builds vLLM's own Attention layer (32 query heads, 8 KV heads,
head size 128, KV cache "auto") with torch's default dtype set to the model dtype, as vLLM's model loader sets
it from --dtype.

reproduce: float32 (`--dtype float32`): the INFO line on vllm.attention.selector; the layer gets XFormersImpl.
fix_1 (`--dtype bfloat16`): no line, the layer gets FlashAttentionImpl (the compiled module loads); float16
is checked the same way (noted)."""

from verification.cases.vllm import _vllm_v0 as v0

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
LAYER = dict(kv_cache_dtype="auto", **v0.HEADS)


def reproduce(ctx):
    got, res = v0.run(ctx, dtype="float32", **LAYER)
    v0.expect_line(ctx, res)


def fix_1(ctx):
    got, res = v0.run(ctx, dtype="bfloat16", **LAYER)
    v0.quiet(ctx, got, res, "FlashAttentionImpl")
    got, res = v0.run(ctx, dtype="float16", **LAYER)
    v0.quiet(ctx, got, res, "FlashAttentionImpl")
