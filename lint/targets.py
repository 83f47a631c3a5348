"""Qualified names of the upstream functions the rules look at, and their positional parameters.

Names are those a module imports from (re-exports included), read from the released code:
sglang 0.5.20-0.5.23, sgl-kernel 0.3.21, flash-attn-4 4.0.0b20-b36, torch 2.9-2.11, flashinfer 0.6-0.7.
"""

from __future__ import annotations

_SGL = "sglang.kernels.ops.attention"

# SGLang's dispatcher: ver=3 (default) goes to FA3, ver=4 to the FA4 wrappers, anything else raises.
DISPATCH_KVCACHE = frozenset({f"{_SGL}.flash_attention.flash_attn_with_kvcache"})
DISPATCH_VARLEN = frozenset({f"{_SGL}.flash_attention.flash_attn_varlen_func"})
DISPATCH = DISPATCH_KVCACHE | DISPATCH_VARLEN

# SGLang's FA4 wrappers (always FA4)
SGL_FA4_KVCACHE = frozenset({
    f"{_SGL}.flash_attention_v4.flash_attn_with_kvcache",
    f"{_SGL}.flash_attention_v4_sm120.flash_attn_with_kvcache",
})
SGL_FA4_VARLEN = frozenset({f"{_SGL}.flash_attention_v4.flash_attn_varlen_func"})

# sgl-kernel 0.3.21 (the FA3 wheel with a ver=4 switch)
SGL_KERNEL_KVCACHE = frozenset({"sgl_kernel.flash_attn.flash_attn_with_kvcache"})

# FlashAttention 4 CuTe interface: upstream flash-attn-4, and SGLang's vendored copy
FA4_UPSTREAM = frozenset(
    f"flash_attn.cute{mod}.{fn}"
    for mod in ("", ".interface") for fn in ("flash_attn_func", "flash_attn_varlen_func"))
FA4_VENDORED = frozenset(
    f"{_SGL}.flash_attn.cute{mod}.{fn}"
    for mod in ("", ".interface") for fn in ("flash_attn_func", "flash_attn_varlen_func"))

SDPA = frozenset({"torch.nn.functional.scaled_dot_product_attention",
                  "torch._C._nn.scaled_dot_product_attention"})
SDPA_KERNEL = frozenset({"torch.nn.attention.sdpa_kernel"})
SDP_KERNEL_LEGACY = frozenset({"torch.backends.cuda.sdp_kernel"})
SDP_BACKEND = "torch.nn.attention.SDPBackend"

_KVCACHE = ("q", "k_cache", "v_cache", "k", "v", "qv", "rotary_cos", "rotary_sin", "cache_seqlens",
            "cache_batch_idx", "cache_leftpad", "page_table", "cu_seqlens_q", "cu_seqlens_k_new",
            "max_seqlen_q", "rotary_seqlens", "q_descale", "k_descale", "v_descale", "softmax_scale",
            "causal")
_DISPATCH_VARLEN = ("q", "k", "v", "cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k",
                    "seqused_q", "seqused_k", "page_table", "softmax_scale", "causal", "qv")
_SGL_FA4_VARLEN = ("q", "k", "v", "cu_seqlens_q", "cu_seqlens_k", "qv", "seqused_q", "seqused_k",
                   "max_seqlen_q", "max_seqlen_k", "page_table", "softmax_scale", "causal", "softcap")
_FA4_FUNC = ("q", "k", "v", "qv", "gather_kv_indices", "softmax_scale")
_FA4_VARLEN = ("q", "k", "v", "qv", "cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k",
               "min_seqlen_k", "seqused_q", "seqused_k", "gather_kv_indices", "page_table",
               "softmax_scale", "causal", "window_size", "learnable_sink", "softcap")
_SDPA = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale")

_FA2_KVCACHE = ("q", "k_cache", "v_cache", "k", "v", "rotary_cos", "rotary_sin", "cache_seqlens",
                "cache_batch_idx", "cache_leftpad", "block_table", "softmax_scale", "causal",
                "window_size", "softcap")
_FA2_FUNC = ("q", "k", "v", "dropout_p", "softmax_scale", "causal", "window_size", "softcap")
_FA2_VARLEN = ("q", "k", "v", "cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k",
               "dropout_p", "softmax_scale", "causal", "window_size", "softcap")

SIGNATURES: dict[str, tuple[str, ...]] = {}
for _m in ("flash_attn", "flash_attn.flash_attn_interface"):
    SIGNATURES[f"{_m}.flash_attn_with_kvcache"] = _FA2_KVCACHE
    SIGNATURES[f"{_m}.flash_attn_func"] = _FA2_FUNC
    SIGNATURES[f"{_m}.flash_attn_varlen_func"] = _FA2_VARLEN
for _names, _sig in ((DISPATCH_KVCACHE | SGL_FA4_KVCACHE | SGL_KERNEL_KVCACHE, _KVCACHE),
                     (DISPATCH_VARLEN, _DISPATCH_VARLEN), (SGL_FA4_VARLEN, _SGL_FA4_VARLEN),
                     (SDPA, _SDPA)):
    for _n in _names:
        SIGNATURES[_n] = _sig
for _n in FA4_UPSTREAM | FA4_VENDORED:
    SIGNATURES[_n] = _FA4_VARLEN if _n.endswith("varlen_func") else _FA4_FUNC


def positional_params(targets: frozenset[str]) -> tuple[str, ...]:
    """Positional parameter names shared by every candidate target (their common prefix)."""
    sigs = [SIGNATURES.get(t, ()) for t in targets]
    if not sigs:
        return ()
    out = []
    for names in zip(*sigs):
        if len(set(names)) != 1:
            break
        out.append(names[0])
    return tuple(out)


# the prefilter: a file can only match when it contains, for some target, both its name and the
# name of the module it comes from (every way of importing it spells both)
def last_names(names: frozenset[str]) -> tuple[tuple[bytes, ...], ...]:
    out = set()
    for n in names:
        parts = n.split(".")
        out.add((parts[-1].encode(), parts[-2].encode()) if len(parts) > 1 else (parts[-1].encode(),))
    return tuple(sorted(out))


def inside(calls: frozenset[str], contexts: frozenset[str]) -> tuple[tuple[bytes, ...], ...]:
    """Prefilter groups for a rule that reports on `calls` only inside a `with` of one of
    `contexts`: the words of both (the analysis resolves a context, like a call, only from names
    the module spells)."""
    return tuple(sorted({c + w for c in last_names(calls) for w in last_names(contexts)}))
