"""Wan's attention() wrapper warns "Padding mask is disabled when using scaled_dot_product_attention ..."
whenever its SDPA branch is given q_lens or k_lens, and then calls SDPA without any mask.

Environment: with_cpu_torch() (torch 2.13.0+cpu, local wheel) and diffusers 0.32.2 (pip --target; the
wrapper's model.py imports diffusers' ModelMixin). Downstream files, exported from local clones by
verification/cases/_downstream.py (nothing of them is committed): kijai/ComfyUI-WanVideoWrapper
wanvideo/modules/attention.py and model.py at 3c70da4 (2025-02-26, the last commit that warns) and at
9e95712 (2025-02-27, the warning commented out); Wan-Video/Wan2.1 wan/modules/attention.py at 9737cba.
The packages' __init__.py files, which import T5, the VAE and the pipeline, are left out (empty ones
stand in their place); the module files are the commits' own. flash-attn is not installed. A child
builds the wrapper's WanSelfAttention (dim 64, 2 heads, head dim 32, attention_mode 'sdpa'), which
passes k_lens=seq_lens to attention(), and runs it on a 1x4x4 latent grid (16 tokens, rope frequencies
made as the wrapper's nodes.py makes them) under CPU bf16 autocast, as Wan runs its model under bf16
autocast. Warnings are recorded with warnings.catch_warnings and printed as Python prints them.

Reproduce: the wrapper's self-attention at 3c70da4 warns the record's UserWarning; Upstream Wan 2.1's
attention() at 9737cba, with both of its FlashAttention flags False (noted), warns the same when called
with k_lens (the record's first condition: a project routing through attention()). Fix 1 (nothing to do
on one GPU): with as many tokens as seq_len (no padding, the single-GPU case), the SDPA output is within
bf16 rounding of the same module with attention() replaced by an fp32 attention that masks every key
past k_lens (what flash-attn's varlen path computes); with 8 zero tokens of padding (seq_len 24) the
outputs at the 16 real tokens differ well beyond that (the fix's caveat, noted with the numbers); and
the wrapper at 9e95712 runs the same module without the warning (the fix's update). Fix 2 (flash-attn
and a flash attention mode) needs a GPU: skipped."""

import json

from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _downstream, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
WRAPPER = "kijai/ComfyUI-WanVideoWrapper"
WARNS = "3c70da4"  # 2025-02-26: attention.py warns in its sdpa branch
QUIET = "9e95712"  # 2025-02-27: the warning commented out
WAN = "Wan-Video/Wan2.1"
WAN_COMMIT = "9737cba9c1c3c4d04b33fcad41c111989865d315"
DIFFUSERS = "diffusers==0.32.2"

CHILD = r'''
import json, sys, warnings
import torch
MODE = sys.argv[1]
import wanvideo.modules.attention as wa
import wanvideo.modules.model as wm
import wan.modules.attention as ua
print("flags wrapper FA2", wa.FLASH_ATTN_2_AVAILABLE, "FA3", wa.FLASH_ATTN_3_AVAILABLE,
      "| upstream FA2", ua.FLASH_ATTN_2_AVAILABLE, "FA3", ua.FLASH_ATTN_3_AVAILABLE, flush=True)

def show(caught):
    for w in caught:
        print(f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}", flush=True)

def masked_fp32(q, k, v, q_lens=None, k_lens=None, **kw):
    """fp32 attention that ignores every key past k_lens (flash-attn's varlen semantics)."""
    qt, kt, vt = (t.float().transpose(1, 2) for t in (q, k, v))
    s = qt @ kt.transpose(-1, -2) / qt.shape[-1] ** 0.5
    if k_lens is not None:
        keep = torch.arange(kt.shape[2])[None, :] < k_lens[:, None]
        s = s.masked_fill(~keep[:, None, None, :], float("-inf"))
    return (torch.softmax(s, -1) @ vt).transpose(1, 2).to(q.dtype)

torch.manual_seed(0)
d = 32
freqs = torch.cat([wm.rope_params(1024, d - 4 * (d // 6)), wm.rope_params(1024, 2 * (d // 6)),
                   wm.rope_params(1024, 2 * (d // 6))], dim=1)
m = wm.WanSelfAttention(64, 2, attention_mode="sdpa").eval()
grid = torch.tensor([[1, 4, 4]])
tokens = torch.randn(1, 16, 64)
seq_lens = torch.tensor([16])

def run(x, attn=None):
    saved = wm.attention
    if attn is not None:
        wm.attention = attn
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16), torch.no_grad():
            return m(x, seq_lens, grid, freqs).float()
    finally:
        wm.attention = saved

warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = run(tokens)
print("WRAPPER-WARNINGS", len(caught), flush=True)
show(caught)
result = {"shape": list(out.shape)}
if MODE == "warn":
    q = torch.randn(1, 16, 2, 32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        up = ua.attention(q, q, q, k_lens=seq_lens)
    print("UPSTREAM-WARNINGS", len(caught), flush=True)
    show(caught)
    result["upstream_shape"] = list(up.shape)
elif MODE == "nopad":
    ref = run(tokens, masked_fp32)
    padded = torch.cat([tokens, torch.zeros(1, 8, 64)], dim=1)  # WanModel pads with zeros up to seq_len
    out_pad = run(padded)[:, :16]
    ref_pad = run(padded, masked_fp32)[:, :16]
    result.update(maxerr=float((out - ref).abs().max()), maxerr_padded=float((out_pad - ref_pad).abs().max()),
                  masked_ref_padding_invariant=float((ref_pad - ref).abs().max()))
print("RESULT", json.dumps(result), flush=True)
'''

_runs: dict = {}


def _tree(ctx, repo, commit, paths, inits):
    root = _downstream.tree(ctx, repo, commit, paths)
    for init in inits:
        (root / init).write_text("")
    return root


def _run(ctx, mode: str, wrapper: str = WARNS):
    key = (mode, wrapper)
    if key not in _runs:
        env = b.with_cpu_torch(ctx)
        wrap = _tree(ctx, WRAPPER, wrapper, ("wanvideo/modules/attention.py", "wanvideo/modules/model.py"),
                     ("wanvideo/__init__.py", "wanvideo/modules/__init__.py"))
        wan = _tree(ctx, WAN, WAN_COMMIT, ("wan/modules/attention.py",), ("wan/__init__.py", "wan/modules/__init__.py"))
        _runs[key] = b.run_with_torch(ctx, CHILD.replace("sys.argv[1]", repr(mode)), env=env,
                                      path=[wrap, wan, b.target_dir(ctx, DIFFUSERS, env=env)])
    res = _runs[key]
    ctx.note(f"{WRAPPER} at {wrapper}: " + next((ln for ln in res.output.splitlines() if ln.startswith("flags ")),
                                                 "no flags printed"))
    _venv.reraise(res.output)
    found = [ln[7:] for ln in res.output.splitlines() if ln.startswith("RESULT ")]
    if not found:
        raise AssertionError(f"{mode}: the child printed no result: {res.tail(600)}")
    return res, json.loads(found[-1])


def _section(res, head: str) -> str:
    """The lines the child printed after `head` (its warnings), up to the next marker."""
    lines, keep = [], False
    for line in res.output.splitlines():
        if line.startswith(("WRAPPER-WARNINGS", "UPSTREAM-WARNINGS", "RESULT ")):
            keep = line.startswith(head)
            continue
        if keep:
            lines.append(line)
    return "\n".join(lines)


def _hits(ctx, text: str) -> list[str]:
    return [f"{cat}: {m}" for cat, m in _venv.warning_lines(text) if _venv.tool_message(m, ctx.record["template"])]


def reproduce(ctx):
    res, result = _run(ctx, "warn")
    wrapper, upstream = _section(res, "WRAPPER-WARNINGS"), _section(res, "UPSTREAM-WARNINGS")
    where = [ln.split(": UserWarning", 1)[0].rsplit("/", 3)[-3:] for ln in wrapper.splitlines() if "Padding mask" in ln]
    ctx.note(f"wrapper WanSelfAttention (attention_mode 'sdpa', k_lens=seq_lens): {_hits(ctx, wrapper)} at "
             f"{['/'.join(w) for w in where]}; output {result['shape']}")
    ctx.note(f"Wan 2.1 attention() with k_lens and no flash-attn: {_hits(ctx, upstream)}")
    if not _hits(ctx, upstream):
        raise Refuted("Wan 2.1's attention() did not warn when given k_lens without flash-attn")
    ctx.expect_warning(b.reemit_warnings, wrapper)


def fix_1(ctx):
    res, result = ctx.call(_run, ctx, "nopad")
    ctx.note(f"no padding: SDPA (mask dropped) vs fp32 attention masked by k_lens: {result['maxerr']:.2e}; "
             f"8 zero tokens of padding: {result['maxerr_padded']:.2e} at the real tokens "
             f"(the masked reference itself moves by {result['masked_ref_padding_invariant']:.2e})")
    if result["maxerr_padded"] < 10 * max(result["maxerr"], 1e-3):
        raise Refuted("with padding the dropped mask made no clear difference, against the fix's caveat")
    quiet, _ = ctx.call(_run, ctx, "warn", QUIET)
    hits = _hits(ctx, _section(quiet, "WRAPPER-WARNINGS"))
    if hits:
        ctx.observed = {"class": "UserWarning", "message": hits[0]}
        raise Refuted(f"the wrapper at {QUIET} still warns")
    ctx.note(f"the wrapper at {QUIET} (2025-02-27): the same self-attention in sdpa mode warns nothing")
    ctx.close([result["maxerr"]], [0.0], atol=3e-2,
              what="SDPA without the mask against fp32 attention masked by k_lens, no padding (bf16 autocast)")


def fix_2(ctx):
    ctx.skip("installs flash-attn and runs its varlen kernels, which need a CUDA build and an Ampere or newer GPU")
