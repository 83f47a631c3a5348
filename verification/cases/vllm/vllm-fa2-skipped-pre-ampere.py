"""vLLM 0.6.2 (V0 engine) on a Volta/Turing GPU: the selector logs INFO "Cannot use FlashAttention-2 backend
for Volta and Turing GPUs." and builds the layer on xFormers.

On the CPU with the release's wheel and pinned torch/xformers (verification/cases/vllm/_vllm_v0.py); NVML
answers as one device of compute capability 7.5 (a T4), noted: the capability is the GPU the record is about,
the line is vLLM's. Each step builds vLLM's own Attention layer (32 query heads, 8 KV heads, head size 128,
fp16 default dtype, KV cache "auto").

reproduce: capability 7.5: the INFO line on vllm.attention.selector; the layer gets XFormersImpl.
fix_1 ("nothing to fix if the server runs"): the same layer is built on XFormersImpl, which serves these GPUs
(its kernels need a GPU: not run).
fix_2 ("install the xformers build that matches your torch", through `pip install --force-reinstall
vllm==<version>`): the environment is what the release's METADATA pins (torch 2.4.0, xformers 0.0.27.post2, as
a reinstall of vllm 0.6.2 with its dependencies brings them); xFormers' compiled extension loads next to that
torch (xformers._cpp_lib reports no load failure; its build metadata names the torch it was built for, noted)
and the layer is built on XFormersImpl.
control: capability 8.0 (an A100): no line, FlashAttentionImpl."""

from verification.cases.vllm import _vllm_v0 as v0

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
LAYER = dict(dtype="float16", kv_cache_dtype="auto", **v0.HEADS)

XFORMERS = r'''
out = {"raised": None}
try:
    import xformers, xformers._cpp_lib as cpp
    out["xformers"] = xformers.__version__
    out["load_failure"] = None if cpp._cpp_library_load_exception is None else repr(cpp._cpp_library_load_exception)
    meta = cpp._build_metadata
    out["built_for"] = getattr(meta, "torch_version", None) if meta is not None else None
    out["torch"] = torch.__version__
except BaseException as e:
    out["raised"] = errkb_raised(e)
errkb_report(out)
'''


def reproduce(ctx):
    got, res = v0.run(ctx, cap=(7, 5), **LAYER)
    v0.expect_line(ctx, res)


def fix_1(ctx):
    got, res = v0.run(ctx, cap=(7, 5), **LAYER)
    ctx.call(v0.built, got, "XFormersImpl")


def _loads(got):
    from verification.cases import _venv
    _venv.raise_reported(got)
    if got["load_failure"]:
        raise ImportError(f"xFormers {got['xformers']} could not load its compiled extension: {got['load_failure']}")


def fix_2(ctx):
    got, _ = v0.run_code(ctx, v0.RELEASE, XFORMERS, cap=(7, 5))
    ctx.note(f"xformers {got.get('xformers')} next to torch {got.get('torch')}: built for torch {got.get('built_for')}, "
             f"extension load failure {got.get('load_failure')}")
    ctx.call(_loads, got)
    got, res = v0.run(ctx, cap=(7, 5), **LAYER)
    ctx.call(v0.built, got, "XFormersImpl")


def control(ctx):
    got, res = v0.run(ctx, cap=(8, 0), **LAYER)
    v0.quiet(ctx, got, res, "FlashAttentionImpl")
