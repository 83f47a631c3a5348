"""TVM's Relax CUDA backend asks flashinfer.jit for a kernel generator: "FlashInfer is not installed. Please
follow instructions in https://docs.flashinfer.ai to install FlashInfer."

apache-tvm 0.27.0.post1 (PyPI wheel, `--no-deps --target`, with ml_dtypes and typing_extensions) next to
torch 2.13.0+cpu and FlashInfer's import dependencies (_flashinfer_jit.DEPS, whose apache-tvm-ffi
0.1.15.post2 TVM's runtime loads; 0.25.0's runtime does not load with 0.1.13 and later, although its
metadata asks only for >= 0.1.12). The call is what FlashInferPagedKVCache makes for a prefill kernel:
`tvm.relax.backend.cuda.flashinfer.gen_flashinfer_prefill_module("float16", "float16", "float16", 128, 128,
False)`. Its import comes first, so no GPU or nvcc is needed to meet the message.

Reproduce: without flashinfer-python on the path the call raises the record's ImportError (chained to
"No module named 'flashinfer'"). Fix 1: the fix's command, run in the same environment, prints the real
import error; with flashinfer-python 0.7.2 installed it prints the version, the file and the generator
names (no *_tvm_binding in 0.7.2: the record's case (b)). Fix 2: with flashinfer-python 0.7.2 installed
(`--no-deps`) the same call gets past the import into FlashInfer's JIT, which then needs a GPU or a target
list to go on (the step stops there, noted). Fix 3 (mlc_llm compile without FlashInfer) needs MLC LLM,
which is not on PyPI."""

import os

from verification.cases import _builds as b
from verification.cases import _flashinfer_jit as fi
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
TVM = "apache-tvm==0.27.0.post1"
FLASHINFER = "0.7.2"
CALL = ("import tvm, tvm_ffi\nprint('versions tvm', tvm.__version__, 'tvm-ffi', tvm_ffi.__version__, flush=True)\n"
        "from tvm.relax.backend.cuda import flashinfer as tvm_fi\n"
        "try:\n"
        "    tvm_fi.gen_flashinfer_prefill_module('float16', 'float16', 'float16', 128, 128, False)\n"
        "    print('returned')\n"
        "except Exception as e:\n"
        "    import traceback\n"
        "    cause = e.__cause__ or e.__context__\n"
        "    print('CAUSE', type(cause).__name__ if cause else None, cause, flush=True)\n"
        "    traceback.print_exc()\n")
FIX_1 = ("import flashinfer, flashinfer.jit as j; print(flashinfer.__version__, flashinfer.__file__); "
         "print([n for n in dir(j) if n.startswith('gen_customize') or n.endswith('tvm_binding')])")


def tvm_path(ctx, with_flashinfer: bool) -> tuple[_venv.Venv, list[str]]:
    env, (fi_folder, deps) = fi.site(ctx, FLASHINFER)
    tvm = b.pip_target(ctx, "target-" + TVM.replace("==", "-"), "--no-deps", TVM, "ml_dtypes", "typing_extensions",
                       env=env, what=TVM)
    ctx.note(f"{TVM} (--no-deps --target, with ml_dtypes and typing_extensions)"
             + (f", flashinfer-python {FLASHINFER}" if with_flashinfer else ", no flashinfer-python"))
    return env, [str(tvm), *([fi_folder] if with_flashinfer else []), deps]


def run(ctx, code: str, with_flashinfer: bool) -> _venv.Run:
    env, path = tvm_path(ctx, with_flashinfer)
    extra = {"FLASHINFER_WORKSPACE_BASE": str(fi.workspace("tvm"))}
    res = b.run_with_torch(ctx, code, env=env, path=path, extra_env=extra)
    shown = [ln for ln in res.output.splitlines() if ln.startswith(("versions", "CAUSE", "returned"))]
    ctx.note(" | ".join(shown) + f"; {_venv.last_exception(res.output, 240)}")
    return res


def reproduce(ctx):
    res = run(ctx, CALL, False)
    if "versions tvm" not in res.output:
        ctx.skip(f"TVM did not import here: {res.tail(400)}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    without = run(ctx, FIX_1, False)
    installed = run(ctx, FIX_1, True)

    def shows_real_error_and_names():
        if "No module named 'flashinfer'" not in without.output:
            raise AssertionError(f"the command did not show the real import error: {without.tail(300)}")
        _venv.reraise(installed.output)
        last = installed.output.strip().splitlines()[-1]
        if "gen_customize_batch_prefill_module" not in last:
            raise AssertionError(f"the command did not list the generators: {installed.tail(300)}")
        ctx.note(f"without flashinfer-python: {_venv.last_exception(without.output, 120)}; with {FLASHINFER}: {last[:300]}")

    ctx.call(shows_real_error_and_names)


def fix_2(ctx):
    res = run(ctx, CALL, True)

    def past_the_import():
        _venv.reraise(res.output, ctx.record["template"])
        if "versions tvm" not in res.output:
            raise AssertionError(f"TVM did not import: {res.tail(400)}")
        frames = [ln.strip() for ln in res.output.splitlines() if ln.strip().startswith("File ") and "/flashinfer/" in ln]
        if "returned" not in res.output and not frames:
            raise AssertionError(f"the call stopped before FlashInfer: {res.tail(400)}")
        ctx.note("TVM's call got past `from flashinfer.jit import gen_customize_batch_prefill_module`"
                 + ("" if "returned" in res.output else f" and stopped inside FlashInfer ({frames[-1][:160]}): "
                    + _venv.last_exception(res.output, 160) + " (no GPU and no FLASHINFER_CUDA_ARCH_LIST here)"))

    ctx.call(past_the_import)


def fix_3(ctx):
    ctx.skip("mlc_llm compile --opt flashinfer=0 needs MLC LLM (not on PyPI) and a model to compile")
