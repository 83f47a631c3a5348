"""SGLang's FA4 prefill refuses image (bidirectional) masks outside plain paged MHA prefill, e.g. under a full prefill CUDA graph."""

from types import SimpleNamespace

from verification.cases.sglang._server import FA_BACKEND, fa_backend, sglang_module

BACKEND = "sglang-server"
# the FA backend itself is imported by the helpers, with sgl_kernel stood in where it does not load
REQUIRES = {"packages": ["sglang.srt.server_args"]}


def _extend_standins(ctx, full_prefill_graph=False):
    """An fa4 instance, bf16 KV, and an EXTEND batch whose prefill metadata carries image ranges
    (what Gemma 4 sets for a batch with images); K/V already written (k=v=None)."""
    fa = sglang_module(ctx, FA_BACKEND)
    from sglang.srt.layers.radix_attention import AttentionType
    from sglang.srt.model_executor.forward_batch_info import ForwardMode

    t = ctx.torch
    metadata = fa.FlashAttentionMetadata()
    metadata.image_token_ranges = t.tensor([[-1, -1], [1, 2], [1, 2], [-1, -1]], dtype=t.int32)
    backend = fa_backend(ctx, 4, use_mla=False, fa_skip_kv_cache=False, kv_cache_dtype_str="auto",
                         kv_cache_is_mxfp8=False, local_attn_builder=None, topk=0, forward_metadata=metadata,
                         # under --cuda-graph-backend-prefill full the pass runs on the graph's metadata
                         full_cg_prefill_metadata=metadata if full_prefill_graph else None)
    layer = SimpleNamespace(layer_id=0, sliding_window_size=-1, attn_type=AttentionType.DECODER,
                            is_cross_attention=False, head_dim=128, tp_k_head_num=2)
    batch = SimpleNamespace(forward_mode=ForwardMode.EXTEND, batch_size=1)
    q = t.zeros(4, 4 * 128, dtype=t.bfloat16)
    return backend, q, layer, batch


def reproduce(ctx):
    backend, q, layer, batch = _extend_standins(ctx, full_prefill_graph=True)
    ctx.expect_error(backend.forward_extend, q, None, None, layer, batch)
    # Likewise outside a graph when the layer also passes a score_mod.
    backend, q, layer, batch = _extend_standins(ctx)
    ctx.expect_error(backend.forward_extend, q, None, None, layer, batch, score_mod=lambda *a: None)
