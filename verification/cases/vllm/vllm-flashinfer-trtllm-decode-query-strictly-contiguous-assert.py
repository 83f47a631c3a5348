"""vLLM 0.14.x's TRTLLM decode branch: `.contiguous()` keeps a single-token query slice whose size-1
dimension has a non-packed stride (torch calls it contiguous), and `assert is_strictly_contiguous(decode_query)`
fails.

The kernel path itself needs a Blackwell GPU with FlashInfer's TRTLLM-gen kernels. What the record says
happens before the kernel is pure Python, and runs here with the releases' own code
(verification/cases/vllm/_vllm_releases.py): the three statements of FlashInferImpl.forward that
make and check the decode query (`decode_query = query[:num_decode_tokens]`, the TRTLLM branch's
`decode_query = decode_query.contiguous()...` and its `assert is_strictly_contiguous(decode_query)`),
found by their text in the release's vllm/v1/attention/backends/flashinfer.py and executed at their own
line numbers with the release's vllm.utils.torch_utils.is_strictly_contiguous, on the query of one decode
token sliced from a step's query that is a view of a wider fused-QKV buffer (the meaning's "view of a
wider buffer"): one decode request batched ahead of a 3-token prefill, so num_decode_tokens is 1 and
the slice keeps the buffer's row stride. (In a step of one token, .view() gives the query packed strides
already; the steps note it.)

reproduce: 0.14.1 stops at the assert (the statement Python prints is the record's message; line noted).
fix 1: 0.16.0's statements on the same query pass, and the rebuilt query holds the same values.
fix 2 (use_trtllm_attention false) and fix 3 (another backend) choose another decode path; which path
vLLM takes is decided on a Blackwell GPU: skipped.
control: 0.14.1 on a query that is a tensor of its own (packed strides) passes."""

from verification.cases.vllm import _vllm_releases as rel

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 1800

CODE = r'''
import re
from pathlib import Path
import torch
import vllm
from vllm.utils.torch_utils import is_strictly_contiguous

H, HKV, D = 8, 2, 64
torch.manual_seed(0)
TOKENS = 4                                             # one decode token, then a 3-token prefill
fused = torch.randn(TOKENS, (H + 2 * HKV) * D)         # the step's fused q|k|v projection
if VIEW:
    query = fused[:, : H * D].view(TOKENS, H, D)       # q as a view of the wider buffer
else:
    query = fused[:, : H * D].clone().view(TOKENS, H, D)  # q as a tensor of its own
one = fused[:1, : H * D].view(1, H, D)                 # the same view in a step of one token
path = Path(vllm.__file__).parent / "v1" / "attention" / "backends" / "flashinfer.py"
lines = path.read_text().splitlines()

def find(pattern, start=0):
    return next(i for i in range(start, len(lines)) if re.fullmatch(pattern, lines[i].strip()))

i_slice = find(r"decode_query = query\[:num_decode_tokens\]")
i_branch = find(r"assert isinstance\(attn_metadata\.decode, TRTLLMDecode\)", i_slice)
i_layout = find(r"decode_query = decode_query\.contiguous\(\).*", i_branch)
i_assert = find(r"assert is_strictly_contiguous\(decode_query\)", i_layout)
ns = {"torch": torch, "is_strictly_contiguous": is_strictly_contiguous, "query": query, "num_decode_tokens": 1}
info = {"query_strides": list(query[:1].stride()), "torch_is_contiguous": query[:1].is_contiguous(),
        "one_token_step_strides": list(one.stride()),
        "lines": {lines[i].strip(): i + 1 for i in (i_slice, i_layout, i_assert)}}
try:
    for i in (i_slice, i_layout, i_assert):
        exec(compile("\n" * i + lines[i].strip(), str(path), "exec"), ns)
    dq = ns["decode_query"]
    info.update(raised=None, decode_strides=list(dq.stride()), same_values=bool(torch.equal(dq, query[:1])))
except BaseException as exc:
    info.update(raised=errkb_raised(exc))
errkb_report(info)
'''


def _run(ctx, version: str, view: bool = True) -> dict:
    got = rel.run(ctx, version, CODE.replace("VIEW", repr(view)))
    ctx.note(f"vllm {version}, query {'a view of the fused buffer' if view else 'a tensor of its own'}: strides "
             f"{got['query_strides']} (in a step of one token the view has {got['one_token_step_strides']}), torch "
             f"is_contiguous {got['torch_is_contiguous']}; statements at {got['lines']}; "
             + (f"raised at line {got['raised']['line']}: {got['raised']['source']}" if got["raised"]
                else f"passed, decode_query strides {got['decode_strides']}"))
    return got


def _passes(ctx, got: dict) -> None:
    rel.passes(ctx, got, "same_values", "the decode query's values changed")


def reproduce(ctx):
    got = _run(ctx, "0.14.1")
    ctx.expect_error(rel.raise_statement, got["raised"])


def fix_1(ctx):
    _passes(ctx, _run(ctx, "0.16.0"))


def fix_2(ctx):
    ctx.skip("whether vLLM takes the TRTLLM decode path is decided on a Blackwell GPU (compute capability 10.x)")


def fix_3(ctx):
    ctx.skip("switching the attention backend changes the decode path only on a Blackwell GPU, where FlashInfer uses TRTLLM")


def control(ctx):
    _passes(ctx, _run(ctx, "0.14.1", view=False))
