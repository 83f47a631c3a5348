"""FlashAttention 2 requested for a model on CPU where torch sees no GPU: "... with a model not
initialized on GPU and with no GPU available."

Everything runs in child processes (verification/cases/_tiny_llama.py): a two-layer Llama saved from
a config made in code, loaded with from_pretrained(folder, attn_implementation="flash_attention_2").
The environment is the record's situation: a CPU-only torch build (2.13.0+cpu, torch.version.cuda is
None) with flash-attn 2.8.3's Python package importable (its sdist built with
FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE: transformers only looks the package and its version up, it
imports nothing from it before the checks). No GPU is faked and transformers is not patched.

Reproduce: transformers 4.36.2, 4.46.3 and 4.51.3 each raise the message. The notes add the rest: the
same load with PyPI's CUDA build of torch 2.14.1 on this GPU-less machine (the availability check
stops first), and 4.57.3 and 5.25.0 on the CPU build, which stop earlier too (4.57.3 in
modeling_flash_attention_utils._lazy_imports at model init, 5.25.0 in its availability check): the
record says so since 2026-12-06. Fix 1: the record's one-line check, in both environments.
Fix 2 needs a GPU. Fix 3: attn_implementation="sdpa" loads and matches eager (4.36.2 and 4.57.3)."""

from verification.cases import _tiny_llama as llama
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
RELEASES = ["transformers==4.36.2", "transformers==4.46.3", "transformers==4.51.3"]
ELSEWHERE = ["transformers==4.57.3", "transformers==5.25.0"]  # noted: both stop earlier on this machine
LOAD = 'attn_implementation="flash_attention_2"'
CHECK = "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"


def reproduce(ctx):
    env, path = llama.cpu_with_flash_attn(ctx)
    runs = {rel: llama.load(ctx, rel, LOAD, env=env, path=path) for rel in RELEASES}
    cuda = llama.cuda_torch_without_gpu(ctx)
    for rel in ("transformers==4.36.2", "transformers==4.57.3"):
        res = llama.load(ctx, rel, LOAD, env=cuda, path=path)
        ctx.note(f"(CUDA build of torch 2.14.1, no GPU) {rel}: {llama.outcome(res)}")
    for rel in ELSEWHERE:
        res = llama.load(ctx, rel, LOAD, env=env, path=path)
        ctx.note(f"(CPU build) {rel}: {llama.outcome(res)}")
    llama.each_release(ctx, runs)
    ctx.expect_error(_venv.reraise, runs[RELEASES[-1]].output, ctx.record["template"])


def fix_1(ctx):
    cpu = llama.cpu_with_flash_attn(ctx)[0].python_run(CHECK)
    cuda = llama.cuda_torch_without_gpu(ctx).python_run(CHECK)

    def tells_apart():
        _venv.reraise(cpu.output)
        _venv.reraise(cuda.output)
        a, b = cpu.output.split()[-3:], cuda.output.split()[-3:]
        ctx.note(f"CPU-only build prints {' '.join(a)}; PyPI's CUDA build on this GPU-less machine prints {' '.join(b)}")
        if not (a[1] == "None" and a[2] == "False" and b[1] != "None" and b[2] == "False"):
            raise AssertionError(f"{a} / {b}")

    ctx.call(tells_apart)


def fix_2(ctx):
    ctx.skip("a CUDA build of torch only helps on a machine with a GPU; on this one it stops at transformers' "
             "availability check instead (reproduce's notes)")


def fix_3(ctx):
    env, path = llama.cpu_with_flash_attn(ctx)
    llama.sdpa_matches_eager(ctx, "transformers==4.36.2", env=env, path=path)
    llama.sdpa_matches_eager(ctx, "transformers==4.57.3", env=env, path=path)
