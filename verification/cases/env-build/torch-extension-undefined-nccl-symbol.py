"""An NCCL older than torch's in site-packages/nvidia/nccl/lib: "undefined symbol: ncclCommRegister".

PyPI's torch 2.5.1 (CUDA 12.4; its metadata pins nvidia-nccl-cu12==2.21.5) installed by uv with pip 26.3,
then the nvidia-nccl-cu12 2.18.1 wheel installed over it with `--no-deps`, as an older pin in a
requirements file does: the same file, nvidia/nccl/lib/libnccl.so.2, now comes from NCCL 2.18, which has
no ncclCommRegister (declared from 2.19). Nothing here needs a GPU: the loader resolves the import list
when the library is mapped.

Reproduce: `import torch` (the first line of every attention extension's import: flash_attn,
xformers, vllm ...) raises the record's ImportError. The file the loader names is torch's own
libtorch_cuda.so (noted): the record says this is how the mismatch usually shows first; an extension
that imports nccl functions itself (the record's flash_attn_2_cuda built against a torch nightly) is not
available as a wheel here, so the extension-named form is not shown. Fix 1: its commands, run in that
environment, show torch's pin (2.21.5), the installed 2.18.1 and `nm -D --defined-only` counting 0
ncclCommRegister. Fix 2: `pip install --force-reinstall --no-deps nvidia-nccl-cu12==2.21.5` (the version
torch 2.5.1 pins) and `import torch` works, torch.cuda.nccl.version() = (2, 21, 5). Fix 3: with the right
wheel, the 2.18.1 library put in the process by LD_PRELOAD brings the error back, and with LD_PRELOAD unset
the import works. Fix 4 rebuilds flash-attn: not run."""

import os
import re
import shutil

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
TORCH = "torch==2.5.1"
OLD = "nvidia-nccl-cu12==2.18.1"
PINNED = "nvidia-nccl-cu12==2.21.5"
IMPORT = "import torch\nprint('IMPORTED torch', torch.__version__, 'nccl', torch.cuda.nccl.version(), flush=True)\n"


def env(ctx, key: str) -> _venv.Venv:
    """torch 2.5.1 with pip, then the old NCCL wheel over its pinned one (once per key)."""
    _, venv = b.uv_env(ctx, key, TORCH, "numpy", f"pip=={b.PIP}")
    stamp = venv.path / ".errkb-old-nccl"
    if not stamp.is_file():
        res = venv.pip("install", "--no-deps", OLD, timeout=900)
        if res.returncode != 0:
            ctx.skip(f"could not install {OLD}: {res.tail(400)}")
        stamp.write_text(OLD)
    ctx.note(f"then `pip install --no-deps {OLD}` over torch's pinned {PINNED}")
    return venv


def imported(ctx, venv: _venv.Venv, what: str, **extra) -> _venv.Run:
    res = venv.python_run(IMPORT, timeout=300, **extra)
    ctx.note(f"{what}: " + next((ln for ln in res.output.splitlines() if ln.startswith("IMPORTED")),
                                _venv.last_exception(res.output, 300)))
    return res


def reproduce(ctx):
    venv = env(ctx, "nccl-old")
    res = imported(ctx, venv, "`import torch` with NCCL 2.18.1")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    venv = env(ctx, "nccl-old")
    script = ("python -c \"import importlib.metadata as m; print([r for r in m.requires('torch') or [] if 'nccl' in r])\"\n"
              "pip list 2>/dev/null | grep -i nccl\n"
              "NCCL=$(python -c \"import sysconfig; print(sysconfig.get_paths()['purelib'])\")/nvidia/nccl/lib/libnccl.so.2\n"
              "nm -D --defined-only \"$NCCL\" | grep -c ncclCommRegister\n")
    res = _venv.run(["bash", "-c", script], env=_venv.tool_env(VIRTUAL_ENV=str(venv.path),
                                                                PATH=f"{venv.path}/bin:" + os.environ["PATH"]),
                    timeout=300)
    lines = [ln.strip() for ln in res.output.splitlines() if ln.strip()]
    ctx.note("fix 1's commands printed: " + " | ".join(lines))

    def shows_mismatch():
        if not any(re.search(r"nvidia-nccl-cu12\s*\(?==2\.21\.5", ln) for ln in lines):
            raise AssertionError("torch's NCCL pin not shown")
        if not any(ln.split()[:2] == ["nvidia-nccl-cu12", "2.18.1"] for ln in lines):
            raise AssertionError("the installed NCCL 2.18.1 not shown")
        if lines[-1] != "0":
            raise AssertionError(f"nm counted {lines[-1]} ncclCommRegister")
    ctx.call(shows_mismatch)


def fix_2(ctx):
    venv = env(ctx, "nccl-fixed")
    res = venv.pip("install", "--force-reinstall", "--no-deps", PINNED, timeout=900)
    ctx.note(f"`pip install --force-reinstall --no-deps {PINNED}`: exit {res.returncode}")
    got = imported(ctx, venv, "`import torch` after the reinstall")
    ctx.call(_venv.finished, got, "IMPORTED torch", "import torch")


def fix_3(ctx):
    venv = env(ctx, "nccl-preload")
    old = venv.path / "old-libnccl" / "libnccl.so.2"
    if not old.is_file():
        old.parent.mkdir(parents=True, exist_ok=True)
        site = venv.python_run("import sysconfig; print(sysconfig.get_paths()['purelib'])").output.strip().splitlines()[-1]
        shutil.copy2(f"{site}/nvidia/nccl/lib/libnccl.so.2", old)
        res = venv.pip("install", "--force-reinstall", "--no-deps", PINNED, timeout=900)
        if res.returncode != 0:
            ctx.skip(f"could not install {PINNED}: {res.tail(400)}")
    ctx.note(f"NCCL 2.18.1's libnccl.so.2 copied aside, {PINNED} installed in its place")
    preloaded = imported(ctx, venv, "with LD_PRELOAD=<NCCL 2.18.1's libnccl.so.2>", LD_PRELOAD=str(old))
    if _venv.tool_message(preloaded.output, ctx.record["template"]) is None:
        raise AssertionError(f"the preloaded old NCCL did not bring the error back: {preloaded.tail(400)}")
    got = imported(ctx, venv, "with LD_PRELOAD unset")
    ctx.call(_venv.finished, got, "IMPORTED torch", "import torch")


def fix_4(ctx):
    ctx.skip("rebuilds flash-attn against the installed torch: a CUDA compile of hours")
