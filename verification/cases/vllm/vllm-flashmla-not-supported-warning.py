"""vLLM 0.8.5: an MLA model with KV block size 64 on a non-Hopper GPU: the selector logs WARNING "FlashMLA
backend is not supported due to FlashMLA is only supported on Hopper devices." and goes on without FlashMLA.

On the CPU with vLLM 0.8.5's wheel and its pinned torch 2.6.0 (verification/cases/vllm/_vllm_v0.py): vllm._C and
vllm._flashmla_C load for real with a stub CUDA 12.4 driver library; NVML answers as one device of the step's
compute capability (vLLM's CudaPlatform and vllm/attention/ops/flashmla.py ask vLLM's platform), noted. Each
step calls vllm.attention.selector.get_attn_backend as vLLM's model runner does for a DeepSeek-V2-style MLA
layer (head size 576 = kv_lora_rank 512 + rope dim 64, bf16, KV cache "auto", use_mla=True), V0 engine.

reproduce: 8.0 (A100), block size 64, nothing forced: the WARNING on vllm.platforms.cuda. What the selector
returns after it is noted (0.8.5's V0 path goes on to its non-MLA choice).
fix_1: VLLM_ATTENTION_BACKEND=TRITON_MLA with the default block size (16) on 8.0: no warning, TritonMLABackend.
fix_2 (a build that includes FlashMLA, on Hopper): 9.0 with the wheel's _flashmla_C present: `import
vllm._flashmla_C` works, and block size 64 gets FlashMLABackend with no warning. With _flashmla_C left out of
the tree the warning names it instead ("vllm._flashmla_C is not available ..."; noted)."""

import logging

from errkb.verify.case import Refuted
from verification.cases import _venv
from verification.cases.vllm import _vllm_v0 as v0

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 2400
RELEASE = "0.8.5"
LOGGER = "vllm.platforms.cuda"
MLA = dict(head_size=576, dtype="bfloat16", kv_cache_dtype="auto", use_mla=True)
FLASHMLA_SO = "vllm/_flashmla_C.abi3.so"

IMPORT = r'''
out = {"raised": None}
try:
    import vllm._flashmla_C
    out["file"] = vllm._flashmla_C.__file__
except BaseException as e:
    out["raised"] = errkb_raised(e)
errkb_report(out)
'''


def _select(ctx, cap, block_size, drop=(), **env):
    extra = {"VLLM_USE_V1": "0", **env}
    got, res = v0.run_code(ctx, RELEASE, v0.SELECT, cap=cap, drop=drop, extra_env=extra,
                           select=dict(MLA, block_size=block_size))
    v0.described(ctx, RELEASE, got, res, f"get_attn_backend(MLA, block size {block_size}) on {cap[0]}.{cap[1]}"
                 + (f" without {', '.join(drop)}" if drop else ""), extra_env=env, loggers=("vllm.platforms",))
    return got, res


def _selected(got, name):
    _venv.raise_reported(got)
    if got["backend"][0] != name:
        raise AssertionError(f"the selector returned {got['backend']}, not {name}")


def reproduce(ctx):
    got, res = _select(ctx, (8, 0), 64)
    v0.expect_line(ctx, res, LOGGER, logging.WARNING)


def fix_1(ctx):
    got, res = _select(ctx, (8, 0), 16, VLLM_ATTENTION_BACKEND="TRITON_MLA")
    ctx.not_logged(LOGGER, v0.relog, res)
    ctx.call(_selected, got, "TRITON_MLA")


def fix_2(ctx):
    got, _ = v0.run_code(ctx, RELEASE, IMPORT, cap=(9, 0))
    ctx.note(f"import vllm._flashmla_C -> {got.get('file') or got['raised']}")
    ctx.call(_venv.raise_reported, got)
    got, res = _select(ctx, (9, 0), 64)
    ctx.not_logged(LOGGER, v0.relog, res)
    ctx.call(_selected, got, "FLASHMLA")
    _, res = _select(ctx, (9, 0), 64, drop=(FLASHMLA_SO,))
    if not any(r["msg"].startswith("FlashMLA backend is not supported due to vllm._flashmla_C is not available")
               for r in v0.records(res)):
        raise Refuted("without _flashmla_C on 9.0 the warning did not name the missing module")
