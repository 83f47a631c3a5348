"""name 'flash_attn_varlen_func' is not defined: training code that guards its FlashAttention import
with try/except ImportError and calls the function later.

The code is openchat's own, from PyPI: ochat 3.6.1 (pip --target, --no-deps), whose
ochat/models/unpadded_llama.py wraps `from flash_attn.flash_attn_interface import
flash_attn_varlen_func` in try/except ImportError and prints a notice. Environment: this Python with
a CPU-only torch (2.13.0+cpu, `_builds.with_cpu_torch`) and transformers 4.40.2 (pip --target; ochat
asks for >=4.40.1). Everything runs in child processes.

Reproduce: without flash-attn, ochat's LlamaForCausalLM built from a two-layer config made in code
runs its unpadded forward pass on the CPU and stops at the attention call with the record's
NameError (the notice printed at import is noted). Fix 1: the fix's two commands name the swallowed
cause ("No module named 'flash_attn'"). Fix 2: with flash-attn 2.8.3 installed (its sdist built with
FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE, with einops, its dependency; the compiled flash_attn_2_cuda stood in by errkb, as in
verification/cases/flash-attn/_fa_py.py, since this machine has no CUDA build) ochat's module binds
the name and prints no notice; the kernel itself needs an sm80+ GPU and is not run. Fix 3 (flash-attn
1.x) is skipped: 1.0.9 exists only as an sdist whose metadata step needs a CUDA build environment."""


from errkb.verify.case import Refuted
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
OCHAT = "ochat==3.6.1"
TRANSFORMERS = "transformers==4.40.2"
FLASH_ATTN = "2.8.3"
NOTICE = "FlashAttention not found"
STANDIN = _venv.standin_preamble("flash_attn_2_cuda")
FORWARD = r'''
import torch
from transformers.models.llama.configuration_llama import LlamaConfig
import ochat.models.unpadded_llama as ul
cfg = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
model = ul.LlamaForCausalLM(cfg).eval()
lengths = [5, 7]  # two packed sequences, as ochat's trainer feeds them
ids = torch.randint(0, 128, (sum(lengths),))
pos = torch.cat([torch.arange(n) for n in lengths])
cu = torch.tensor([0, 5, 12], dtype=torch.int32)
print("FORWARD", flush=True)
model(nz_input_ids=ids, nz_position_ids=pos, cu_seqlens=cu, max_seqlen=max(lengths))
'''
BOUND = ("import ochat.models.unpadded_llama as ul\n"
         "print('BOUND', ul.flash_attn_varlen_func.__module__, ul.flash_attn_varlen_func.__name__, flush=True)\n")
FIX_1 = ["import flash_attn; print(flash_attn.__version__)", "from flash_attn import flash_attn_varlen_func"]


def _path(ctx, flash_attn: bool) -> list[str]:
    env = b.with_cpu_torch(ctx)
    path = [b.target_dir(ctx, OCHAT, no_deps=True, env=env), b.target_dir(ctx, TRANSFORMERS, env=env)]
    if flash_attn:
        path.append(b.target_dir(ctx, b.flash_attn_python_wheel(ctx, FLASH_ATTN, env=env), no_deps=True, env=env))
        path.append(b.target_dir(ctx, "einops", env=env))  # flash-attn's one Python dependency (bert_padding imports it)
    return path


def _run(ctx, code: str, flash_attn: bool = False) -> _venv.Run:
    res = b.run_with_torch(ctx, code, path=_path(ctx, flash_attn), env=b.with_cpu_torch(ctx))
    causes = _venv.exception_lines(res.output)
    ctx.note(("with flash-attn " + FLASH_ATTN if flash_attn else "without flash-attn")
             + (" (flash_attn_2_cuda stood in)" if "STANDIN" in res.output else "")
             + f", `{code.strip().splitlines()[-1][:60]}`: "
             + (f"{causes[-1][0]}: {causes[-1][1][:200]}" if causes else f"exit {res.returncode}")
             + ("; printed the notice" if NOTICE in res.output else ""))
    return res


def reproduce(ctx):
    res = _run(ctx, FORWARD)
    if "FORWARD" not in res.output:
        raise RuntimeError(f"the model was not built: {res.tail(600)}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    runs = [_run(ctx, code) for code in FIX_1]

    def names_cause():
        for code, res in zip(FIX_1, runs):
            causes = _venv.exception_lines(res.output)
            if not causes or causes[-1] != ("ModuleNotFoundError", "No module named 'flash_attn'"):
                raise AssertionError(f"{code!r} did not name the cause: {res.tail(300)}")

    ctx.call(names_cause)


def fix_2(ctx):
    res = _run(ctx, STANDIN + BOUND, flash_attn=True)
    line = ctx.call(_venv.printed, res, "BOUND ")
    if NOTICE in res.output:
        raise Refuted(f"the import still printed the notice: {res.tail(400)}")
    ctx.note(line + " (the kernel needs an sm80+ GPU: not run)")


def fix_3(ctx):
    ctx.skip("needs flash-attn 1.x: 1.0.9 is on PyPI only as an sdist whose metadata step needs a CUDA build "
             "environment (no CUDA torch is installed on this shared machine)")
