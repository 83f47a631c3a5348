"""Inductor's pointwise launch heuristic in torch 2.5.1 asserts "increase TRITON_MAX_BLOCK['X'] to
<n>" for a kernel over more than about 2^34 elements, such as the element-wise mask create_block_mask
evaluates over B x H x Q_LEN x KV_LEN positions of a 48^3-token volume.

What runs here, without a GPU: torch 2.5.1 (PyPI's Linux wheel, with the triton 3.1.0 it requires,
setuptools and numpy<2, in a uv environment). The steps call the heuristic inductor's generated
module calls for such a kernel, torch._inductor.runtime.triton_heuristics.triton_config(size_hints,
1024), with the size hint inductor gives it (the element count rounded up to a power of two), as the
record describes; compiling the mask for a CUDA device needs a GPU, and the H200 here has torch 2.11,
which words the check differently (2.7+: "'XBLOCK' too large ..."), so the full compile path is not run.

Sizes: L = 48^3 = 110592 tokens (pytorch#135028's volume), B = 1.
reproduce: H = 4: 4 * L^2 elements (size hint 2^36) raises the record's AssertionError.
fix_1 (realize_opcount_threshold): the fusion decision is made while compiling for a CUDA device:
skipped here with that reason.
fix_2: BlockMask.from_kv_blocks builds the block mask for the same B, H and L from block counts and
indices (no element-wise kernel at all) and, on a small size where create_block_mask runs eagerly
on the CPU, gives the same dense block layout.
fix_3: create_block_mask with B=None, H=None evaluates 1 x 1 x L x L elements: size hint 2^34, for which
the same heuristic returns a config (XBLOCK 2048) instead of asserting.
control: a pointwise kernel of 2^20 elements gets a config."""

import json

from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "flex-attention"
REQUIRES = {"cuda": False}
TIMEOUT = 900
TORCH = "2.5.1"
L, H = 48 ** 3, 4
MARK = "ERRKB-INDUCTOR "

CHILD = r'''
import json, sys, warnings
warnings.simplefilter("ignore")
import torch
from torch._inductor.runtime import triton_heuristics as th
from torch._inductor.runtime.runtime_utils import next_power_of_2
MODE, ARG = sys.argv[1], json.loads(sys.argv[2])
res = {"torch": torch.__version__, "raised": None}
try:
    if MODE == "config":
        hint = next_power_of_2(ARG)
        res["hint_log2"] = hint.bit_length() - 1
        res["config"] = str(th.triton_config([hint], 1024))
    elif MODE == "kv_blocks":
        from torch.nn.attention.flex_attention import BlockMask, create_block_mask
        B, H, L, S = ARG
        def causal(b, h, q, kv):
            return q >= kv
        def from_blocks(L):
            n = L // S
            rows = torch.arange(n)
            kv_num = (rows + 1).to(torch.int32).expand(B, H, n).contiguous()
            kv_idx = torch.arange(n, dtype=torch.int32).expand(B, H, n, n).contiguous()
            return BlockMask.from_kv_blocks(kv_num, kv_idx, BLOCK_SIZE=S, mask_mod=causal)
        big = from_blocks(L)
        res["big_shape"] = list(big.shape)
        small = 4 * S
        eager = create_block_mask(causal, B, H, small, small, device="cpu", BLOCK_SIZE=S, _compile=False)
        built = from_blocks(small)
        res["dense_equal"] = bool(torch.equal(eager.to_dense(), built.to_dense()))
except Exception as e:
    res["raised"] = [type(e).__name__, str(e)]
print(%r + json.dumps(res))
''' % MARK


def _run(ctx, mode: str, arg) -> dict:
    _, env = b.uv_env(ctx, f"torch-{TORCH}-inductor", f"torch=={TORCH}", "setuptools", "numpy<2")
    res = _venv.run([env.python, "-c", CHILD, mode, json.dumps(arg)], env=_venv.tool_env(VIRTUAL_ENV=str(env.path)),
                    timeout=600)
    return _venv.reported(res, MARK)



def _config(ctx, elements: int, what: str) -> dict:
    got = _run(ctx, "config", elements)
    ctx.note(f"torch {got['torch']}: triton_config for {what} ({elements} elements, size hint "
             f"2^{got.get('hint_log2')}): " + (got.get("config") or f"{got['raised'][0]}: {got['raised'][1]}"))
    return got


def reproduce(ctx):
    got = _config(ctx, H * L * L, f"B=1, H={H}, Q_LEN=KV_LEN={L}")
    ctx.expect_error(_venv.raise_reported, got)


def fix_1(ctx):
    ctx.skip("whether inductor fuses the mask into the block reduction is decided while compiling for a CUDA "
             "device (torch 2.5-2.6 with a GPU); this machine has no GPU, and the H200's torch 2.11 words the "
             "check differently")


def fix_2(ctx):
    got = _run(ctx, "kv_blocks", [1, H, L, 128])
    ctx.call(_venv.raise_reported, got)
    ctx.note(f"torch {got['torch']}: BlockMask.from_kv_blocks for B=1, H={H}, L={L}: shape {got['big_shape']}; "
             "a 512-token causal mask built both ways has the same dense block layout: " + str(got["dense_equal"]))
    if not got["dense_equal"]:
        raise Refuted("from_kv_blocks and create_block_mask disagree on the small causal mask")


def fix_3(ctx):
    ctx.call(_venv.raise_reported, _config(ctx, L * L, f"B=None, H=None, Q_LEN=KV_LEN={L}"))


def control(ctx):
    ctx.call(_venv.raise_reported, _config(ctx, 2 ** 20, "a small pointwise kernel"))
