"""Shared shapes and builders for the FlashInfer 0.7.4 cases (not a case: starts with '_').

FlashInfer JIT-compiles one module per kernel configuration with nvcc (minutes each), so every
kernel-running step uses one of a few configurations, and the worker reuses the compiled module:

- prefill: FA2 batch prefill, fp16 q/k/v/o, head_dim 128 (qk and vo), int32 indices,
  pos_encoding_mode NONE, no soft cap, no window, no fp16 qk reduction. The mask mode is a run-time
  argument (all four masks are in the module), so causal and non-causal share it, and the
  tensor-core decode path (use_tensor_cores=True) and the ragged wrapper load the same module.
- decode: CUDA-core batch decode with the same dtypes and head dim (group size is a run-time switch
  over the instantiated ratios, so 8/2 and 10/2 heads share it).
- mla: the FA3 MLA module on SM90 (FA2 elsewhere), bf16, head_dim_ckv 512, head_dim_kpe 64.

Wrappers get backend="fa2" explicitly, so SM90 does not pick FA3 for prefill and backend="auto"
routing (cuDNN, XQA) never changes the decode module.
"""

from __future__ import annotations

from types import SimpleNamespace

from verification.cases._common import TOL, ref_attention  # noqa: F401 - re-exported

HQ, HK, D, PAGE = 8, 2, 128, 16
KV_LENS = (45, 100)        # two requests: 3 and 7 pages of 16 tokens
Q_LENS = (5, 12)           # prefill/append rows per request (causal, bottom-right aligned)
WORKSPACE_BYTES = 128 * 1024 * 1024

MLA_HEADS, CKV, KPE, MLA_PAGE = 16, 512, 64, 64


def fi():
    import flashinfer

    return flashinfer


def randn(ctx, *shape, dtype=None):
    t = ctx.torch
    return t.randn(*shape, device=ctx.device, dtype=dtype or t.float16)


def workspace(ctx, nbytes=WORKSPACE_BYTES):
    # the decode wrapper wants a zeroed buffer on first use
    return ctx.torch.zeros(nbytes, dtype=ctx.torch.uint8, device=ctx.device)


def indptr(ctx, lens, dtype=None):
    t = ctx.torch
    out = [0]
    for n in lens:
        out.append(out[-1] + int(n))
    return t.tensor(out, dtype=dtype or t.int32, device=ctx.device)


def paged(ctx, kv_lens=KV_LENS, hk=HK, d=D, dv=None, page=PAGE, spare=2, dtype=None):
    """A shuffled NHD page pool plus the per-request keys/values it holds.

    Fields: k, v (pools [pages, page, hk, d]), cache (k, v), indptr/indices/last (int32 CSR page
    metadata), lens (int32 token counts), ks/vs (contiguous per-request K/V for the reference),
    free (page ids no request uses).
    """
    t = ctx.torch
    pages = [-(-int(n) // page) for n in kv_lens]
    total = sum(pages) + spare
    k = randn(ctx, total, page, hk, d, dtype=dtype)
    v = randn(ctx, total, page, hk, dv or d, dtype=dtype)
    perm = t.randperm(total, device=ctx.device).to(t.int32)
    used, free = perm[: sum(pages)], perm[sum(pages):]
    ks, vs, start = [], [], 0
    for n, p in zip(kv_lens, pages):
        ids = used[start:start + p].long()
        ks.append(k[ids].flatten(0, 1)[:n])
        vs.append(v[ids].flatten(0, 1)[:n])
        start += p
    last = [int(n) - (p - 1) * page for n, p in zip(kv_lens, pages)]
    return SimpleNamespace(k=k, v=v, cache=(k, v), indptr=indptr(ctx, pages), indices=used.contiguous(),
                           last=t.tensor(last, dtype=t.int32, device=ctx.device),
                           lens=t.tensor(list(kv_lens), dtype=t.int32, device=ctx.device),
                           ks=ks, vs=vs, pages=pages, free=free.tolist())


def ref(q, q_lens, kv, causal=False, **kw):
    """fp32 reference for packed rows q [sum(q_lens), heads, dim] against each request's K/V."""
    import torch

    outs, start = [], 0
    for n, k, v in zip(q_lens, kv.ks, kv.vs):
        outs.append(ref_attention(q[None, start:start + n], k[None], v[None], causal=causal, **kw)[0])
        start += n
    return torch.cat(outs)


# ---------------------------------------------------------------- shared prefill / decode


def prefill_wrapper(ctx, **kw):
    kw.setdefault("backend", "fa2")
    return fi().BatchPrefillWithPagedKVCacheWrapper(workspace(ctx), "NHD", **kw)


def plan_prefill(w, qo_indptr, kv, hq=HQ, hk=HK, causal=True, **kw):
    import torch

    kw.setdefault("q_data_type", torch.float16)
    w.plan(qo_indptr, kv.indptr, kv.indices, kv.last, hq, hk, D, PAGE, causal=causal, **kw)


def decode_wrapper(ctx, **kw):
    kw.setdefault("backend", "fa2")
    return fi().BatchDecodeWithPagedKVCacheWrapper(workspace(ctx), "NHD", **kw)


def plan_decode(w, kv, hq=HQ, hk=HK, **kw):
    import torch

    kw.setdefault("q_data_type", torch.float16)
    w.plan(kv.indptr, kv.indices, kv.last, hq, hk, D, PAGE, **kw)


def graph_decode_buffers(ctx, batch, max_pages):
    """The three metadata buffers a use_cuda_graph=True decode wrapper reads from."""
    t = ctx.torch
    return {"paged_kv_indptr_buffer": t.zeros(batch + 1, dtype=t.int32, device=ctx.device),
            "paged_kv_indices_buffer": t.zeros(max_pages, dtype=t.int32, device=ctx.device),
            "paged_kv_last_page_len_buffer": t.ones(batch, dtype=t.int32, device=ctx.device)}


# ---------------------------------------------------------------- BatchAttention (holistic)


def plan_holistic(w, qo_indptr, kv, causal=True, **kw):
    import torch

    w.plan(qo_indptr, kv.indptr, kv.indices, kv.lens, HQ, HK, D, D, PAGE, causal=causal,
           q_data_type=torch.float16, kv_data_type=torch.float16, **kw)


# ---------------------------------------------------------------- MLA


def mla_backend(ctx):
    """The generated FA MLA backend this GPU can run: fa3 on SM90, fa2 elsewhere."""
    return "fa3" if ctx.cc == (9, 0) else "fa2"


def mla_inputs(ctx, kv_lens=(200, 77), idtype=None):
    """One decode token per request over a packed [pages, 64, 512 + 64] bf16 latent cache."""
    t = ctx.torch
    bf16 = t.bfloat16
    pages = [-(-n // MLA_PAGE) for n in kv_lens]
    total = sum(pages) + 1
    kv = randn(ctx, total, MLA_PAGE, CKV + KPE, dtype=bf16)
    perm = t.randperm(total, device=ctx.device)[: sum(pages)]
    ks, start = [], 0
    for n, p in zip(kv_lens, pages):
        ks.append(kv[perm[start:start + p]].flatten(0, 1)[:n])
        start += p
    idtype = idtype or t.int32
    return SimpleNamespace(
        q=randn(ctx, len(kv_lens), MLA_HEADS, CKV + KPE, dtype=bf16), kv=kv, ks=ks,
        qo_indptr=indptr(ctx, [1] * len(kv_lens), idtype), kv_indptr=indptr(ctx, pages, idtype),
        kv_indices=perm.to(idtype), kv_len=t.tensor(list(kv_lens), dtype=idtype, device=ctx.device),
        sm_scale=float((128 + 64) ** -0.5))


def mla_wrapper(ctx, backend, nbytes=WORKSPACE_BYTES):
    return fi().mla.BatchMLAPagedAttentionWrapper(workspace(ctx, nbytes), backend=backend)


def plan_mla(w, m, **kw):
    import torch

    meta = fi().mla.MLAPlanMetadata.csr(m.qo_indptr, m.kv_indptr, m.kv_indices, m.kv_len)
    w.plan(metadata=meta, num_heads=MLA_HEADS, head_dim_ckv=CKV, head_dim_kpe=KPE, page_size=MLA_PAGE,
           causal=False, sm_scale=m.sm_scale, q_data_type=torch.bfloat16, kv_data_type=torch.bfloat16, **kw)


def mla_ref(m):
    """MLA as plain attention: keys are the full 576-wide latent+rope rows, values the 512 latent."""
    import torch

    return torch.cat([ref_attention(m.q[None, i:i + 1], k[None, :, None], k[None, :, None, :CKV],
                                    scale=m.sm_scale)[0] for i, k in enumerate(m.ks)])
