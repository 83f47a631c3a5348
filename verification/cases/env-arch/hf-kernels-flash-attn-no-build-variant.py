"""Hugging Face kernels 0.11.1-0.12.3: get_kernel('<hub FlashAttention repo>') raises FileNotFoundError
"Kernel at path `<snapshot>` does not have one of build variants: <variant>, torch-<compute>,
torch-universal" when the repository has no build for this environment.

Environment: torch 2.13.0+cpu (b.with_cpu_torch(), local wheel) and kernels 0.12.3 with its dependencies
(pip --target). No Hub access: HF_HUB_OFFLINE=1 and HF_KERNELS_CACHE pointing at a cache folder laid out
here the way huggingface_hub stores a snapshot of varunneal/flash-attention-3 (refs/main naming the
commit of the record's paste, and one build folder, torch29-cxx11-cu128-x86_64-linux, standing for a
CUDA build; no kernel code). So get_kernel runs its real path: snapshot_download resolves the cached
snapshot, then the variant search fails.

Reproduce: `get_kernel("varunneal/flash-attention-3")` raises the record's FileNotFoundError naming
torch213-cxx11-cpu-x86_64-linux, torch-cpu and torch-universal; install_kernel then raises 'Cannot install
kernel from repo varunneal/flash-attention-3 (revision: main)' from it (noted; the meaning says so).
Fix 1: its first command prints torch 2.13.0+cpu, None, False: the CPU-only torch that 'cpu' in the
variant names stands for (its second command lists the repository on the Hub: not run, no network).
Fix 2 (has_kernel asks the Hub) and fix 3 (a CUDA torch on an NVIDIA GPU) are skipped."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
KERNELS = "kernels==0.12.3"
REPO = "varunneal/flash-attention-3"
SHA = "add01af002563fdeff03a8e5fb77ce497d202055"
FIX_1 = "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"


def _cache() -> str:
    root = _venv._tmp_root() / "hf-kernels-cache"
    repo = root / ("models--" + REPO.replace("/", "--"))
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(SHA)
    (repo / "snapshots" / SHA / "build" / "torch29-cxx11-cu128-x86_64-linux" / "flash_attention_3").mkdir(parents=True, exist_ok=True)
    return str(root)


def reproduce(ctx):
    env = b.with_cpu_torch(ctx)
    _venv.noted(ctx, env)
    code = f"from kernels import get_kernel\nget_kernel({REPO!r})\n"
    res = b.run_with_torch(ctx, code, env=env, path=[b.target_dir(ctx, KERNELS, env=env)],
                           extra_env={"HF_HUB_OFFLINE": "1", "HF_KERNELS_CACHE": _cache()})
    ctx.note("raised: " + " | then: ".join(f"{c}: {m[:200]}" for c, m in _venv.exception_lines(res.output)[-2:]))
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"], "FileNotFoundError")


def fix_1(ctx):
    env = b.with_cpu_torch(ctx)
    res = env.python_run(FIX_1)
    line = res.output.strip().splitlines()[-1] if res.output.strip() else ""
    ctx.note(f"`python -c <the fix's first command>`: {line}; the Hub listing (second command) not run: no network here")

    def answers():
        if not line.endswith("None False"):
            raise AssertionError(f"the check did not show a CPU-only torch: {res.tail(300)}")

    ctx.call(answers)


def fix_2(ctx):
    ctx.skip("has_kernel() asks the Hub which build folders exist; no network here")


def fix_3(ctx):
    ctx.skip("installs a CUDA build of torch and loads the kernel on an NVIDIA GPU")
