"""vLLM 0.6.2 (V0 engine) whose bundled FlashAttention module does not import: the selector logs INFO
"Cannot use FlashAttention-2 backend because the vllm.vllm_flash_attn package is not found. Make sure that
vllm_flash_attn was built and installed (on by default)." and hands the layer to xFormers.

On the CPU with the release's wheel and pinned torch/xformers (verification/cases/vllm/_vllm_v0.py; NVML
answers as one SM90 device, noted). "Built without it" is the wheel's tree without
vllm/vllm_flash_attn/vllm_flash_attn_c.abi3.so (what a source build with the FlashAttention part off or
failed leaves). Each step builds vLLM's own Attention layer (32 query heads, 8 KV heads, head size 128,
fp16 default dtype, KV cache "auto"), a configuration FlashAttention-2 takes.

reproduce: tree without the compiled module: the INFO line; the layer gets XFormersImpl.
fix_1: `import vllm.vllm_flash_attn` by hand in the same environment raises the ImportError the selector
swallowed, naming the missing compiled module.
fix_2: the whole wheel with the torch its METADATA pins (2.4.0): `import vllm.vllm_flash_attn` works, no
line, the layer gets FlashAttentionImpl. Noted, not part of the verdict: the same tree next to torch 2.5.1
(an upgraded torch) still loads the compiled module, and next to torch 2.9.0 `import vllm` itself stops
first (vllm._core_C), so on 0.6.2 neither upgrade leads to this line."""

from errkb.verify.case import Refuted
from verification.cases import _venv
from verification.cases.vllm import _vllm_v0 as v0

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
LAYER = dict(dtype="float16", kv_cache_dtype="auto", **v0.HEADS)


def reproduce(ctx):
    got, res = v0.run(ctx, with_fa=False, **LAYER)
    v0.expect_line(ctx, res)


def fix_1(ctx):
    got, _ = v0.run(ctx, mode="import-fa", with_fa=False)
    if not got["raised"]:
        raise Refuted("`import vllm.vllm_flash_attn` went through in the tree without the compiled module")
    cls, message = got["raised"]
    if not (cls.endswith("Error") and "vllm_flash_attn_c" in message):
        raise Refuted(f"the import by hand raised {cls}: {message!r}, which does not name the compiled module")


def fix_2(ctx):
    got, _ = v0.run(ctx, mode="import-fa")
    ctx.call(_venv.raise_reported, got)
    got, res = v0.run(ctx, **LAYER)
    v0.quiet(ctx, got, res, "FlashAttentionImpl")
    for torch in ("torch==2.5.1", "torch==2.9.0"):
        v0.run(ctx, mode="import-fa", torch=torch)   # noted only
