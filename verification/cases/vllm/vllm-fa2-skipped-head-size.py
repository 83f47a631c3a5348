"""vLLM 0.6.2 (V0 engine) and a head size FlashAttention-2's list lacks: the selector logs INFO "Cannot use
FlashAttention-2 backend for head size N." and hands the layer to xFormers.

On the CPU with the release's wheel and pinned torch/xformers (verification/cases/vllm/_vllm_v0.py; NVML
answers as one SM90 device, noted). Each step builds vLLM's own Attention layer (32 query heads, 8 KV heads,
fp16 default dtype, KV cache "auto") with the head size given.

reproduce: head size 72: the INFO line; then XFormersImpl's constructor refuses the size ("Head size 72 is
not supported by PagedAttention ...", noted: the record's fix 1 says so now).
fix_1 ("nothing to fix if the server runs"): head size 80, also missing from FlashAttention's list but in
PagedAttention's: the same line, and the layer is built on XFormersImpl; 72 is checked again and must still
be refused. The xFormers kernels themselves need a GPU (not run).
fix_2 ("a newer vLLM"): the V0 list is read from 0.6.2's FlashAttentionBackend; the V1 FlashAttention
backend of 0.11.1 still has that fixed list, 0.13.0's takes any multiple of 8 up to 256 (supports_head_size),
so 72 and 80 pass there: vLLM's own classes, imported from each wheel's Python files next to torch
2.13.0+cpu (verification/cases/vllm/_vllm_releases.py), nothing compiled loaded.
control: head size 128: no line, FlashAttentionImpl."""

from errkb.verify.case import Refuted
from verification.cases.vllm import _vllm_releases as rel
from verification.cases.vllm import _vllm_v0 as v0

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
LAYER = dict(dtype="float16", kv_cache_dtype="auto", num_heads=32, num_kv_heads=8)

V1 = r'''
from vllm.v1.attention.backends.flash_attn import FlashAttentionBackend as B
out = {"raised": None}
if hasattr(B, "supports_head_size"):
    out["accepts"] = {str(n): bool(B.supports_head_size(n)) for n in (72, 80, 128)}
else:
    sizes = B.get_supported_head_sizes()
    out["accepts"] = {str(n): n in sizes for n in (72, 80, 128)}
    out["list"] = sizes
errkb_report(out)
'''


def reproduce(ctx):
    got, res = v0.run(ctx, head_size=72, **LAYER)
    v0.expect_line(ctx, res)


def _refused_72(ctx):
    got, _ = v0.run(ctx, head_size=72, **LAYER)
    if not (got["raised"] and got["raised"][0] == "ValueError" and "not supported by PagedAttention" in got["raised"][1]):
        raise Refuted(f"head size 72 on xFormers was not refused by PagedAttention's check: {got}")


def fix_1(ctx):
    got, res = v0.run(ctx, head_size=80, **LAYER)
    ctx.call(v0.built, got, "XFormersImpl")
    _refused_72(ctx)


def fix_2(ctx):
    got, _ = v0.run(ctx, mode="lists")
    if 72 in got["lists"]["FlashAttentionBackend"]:
        raise Refuted("0.6.2's V0 FlashAttention backend lists head size 72")
    old = rel.run(ctx, "0.11.1", V1)
    new = rel.run(ctx, "0.13.0", V1)
    ctx.note(f"V1 FlashAttentionBackend: 0.11.1 accepts {old['accepts']} (list {old.get('list')}); "
             f"0.13.0 accepts {new['accepts']}")
    if not (new["accepts"]["72"] and new["accepts"]["80"]):
        raise Refuted("vLLM 0.13.0's V1 FlashAttention backend does not take head sizes 72 and 80")
    if old["accepts"]["72"]:
        raise Refuted("0.11.1's V1 backend already takes 72: the boundary the record gives is wrong")


def control(ctx):
    got, res = v0.run(ctx, head_size=128, **LAYER)
    v0.quiet(ctx, got, res, "FlashAttentionImpl")
