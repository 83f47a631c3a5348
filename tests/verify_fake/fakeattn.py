"""A tiny pure-Python attention 'library' for the harness tests: real code that raises real
exceptions and warnings, computes real numbers, and (on request) really crashes or hangs."""

from __future__ import annotations

import math
import warnings


def attention(q, k, v, *, causal=False, mask=None, head_dim_limit=8):
    """q, k, v: lists of vectors (one head). Returns a list of vectors."""
    if mask is not None and causal:
        raise RuntimeError("fake_sdpa: Explicit attn_mask should not be set when is_causal=True")
    d = len(q[0])
    if d > head_dim_limit:
        warnings.warn(f"Fake flash kernel not used because head_dim {d} > {head_dim_limit}", UserWarning, stacklevel=2)
        head_dim_limit = d  # falls back to the slow path, as real libraries do
    out = []
    for i, qi in enumerate(q):
        scores = []
        for j, kj in enumerate(k):
            s = sum(a * b for a, b in zip(qi, kj)) / math.sqrt(d)
            if causal and j > i:
                s = -math.inf
            if mask is not None and not mask[i][j]:
                s = -math.inf
            scores.append(s)
        m = max(scores)
        p = [math.exp(s - m) for s in scores]
        z = sum(p)
        out.append([sum(p[j] * v[j][c] / z for j in range(len(v))) for c in range(len(v[0]))])
    return out


def reference(q, k, v, *, causal=False, mask=None):
    """The same maths written independently (softmax via log-sum-exp over kept keys)."""
    d = len(q[0])
    out = []
    for i, qi in enumerate(q):
        keep = [j for j in range(len(k)) if not (causal and j > i) and (mask is None or mask[i][j])]
        logits = {j: sum(a * b for a, b in zip(qi, k[j])) / math.sqrt(d) for j in keep}
        lse = math.log(sum(math.exp(x) for x in logits.values()))
        out.append([sum(math.exp(logits[j] - lse) * v[j][c] for j in keep) for c in range(len(v[0]))])
    return out


def crash_segfault():
    import ctypes

    ctypes.string_at(0)  # reads address 0: SIGSEGV


def crash_abort():
    import os

    os.abort()


def hang(seconds=3600):
    import time

    time.sleep(seconds)


def device_fault():
    """What a library raises after an illegal memory access: the context is unusable afterwards."""
    raise RuntimeError("CUDA error: an illegal memory access was encountered")
