"""`import flashinfer` with flashinfer-python 0.2.1.post1-0.2.5 built from PyPI's sdist (no AOT kernel
modules): FlashInfer's JIT logger prints "flashinfer.jit: Prebuilt kernels not found, using JIT backend"
at INFO.

flashinfer-python 0.2.0.post2 to 0.2.5 are sdists on PyPI whose build backend (custom_backend.py) asks
for torch, ninja and numpy only when FLASHINFER_ENABLE_AOT=1; without it setup.py compiles nothing and
the wheel holds no flashinfer_kernels / flashinfer_kernels_sm90 module: the JIT-only package users get
from `pip install flashinfer-python`. Each release is built here by pip 26.3 (`pip wheel --no-deps`,
isolated: setuptools only, FLASHINFER_ENABLE_AOT unset), then installed by uv 0.9.0 with a CPU-only
torch (b.cpu_torch_requirement(): 2.13.0+cpu; the wheels ask for an unpinned torch) and triton 3.1.0
(0.2.0.post2's flashinfer/page.py imports triton). No GPU and no CUDA toolkit are needed to import
these releases. The child configures logging at INFO (`logging.basicConfig`), imports flashinfer.jit,
then flashinfer, with FLASHINFER_WORKSPACE_BASE in the run's temporary folder; the lines FlashInfer's
logger printed ("<time> - INFO - flashinfer.jit: ...", its own stream handler) are logged again here on
`flashinfer.jit`, word for word.

Reproduce: 0.2.5 prints the line (and once more without any logging configuration: the logger has its
own handler at INFO); 0.2.1.post1, the first release with it, prints it too.
Fix 1 (AOT wheels from flashinfer.ai's index) and fix 2 (a JIT compile with nvcc) are skipped: this
machine reaches no index but PyPI, and a JIT compile needs a CUDA build of torch and a GPU. Before
skipping, fix 2 notes which variable picks the targets 0.2.5's JIT would compile for (the name of its
workspace folder): FLASHINFER_CUDA_ARCH_LIST=9.0 and TORCH_CUDA_ARCH_LIST=9.0, one at a time.
Control: 0.2.0.post2, also without kernel modules, imports without the line."""

import logging
import re
import zipfile

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
LOGGER = "flashinfer.jit"
TRITON = "triton==3.1.0"
PROBE = ("import logging\nlogging.basicConfig(level=logging.INFO)\n"
         "import flashinfer.jit as jit\nprint('has_prebuilt_ops', jit.has_prebuilt_ops, flush=True)\n"
         "import flashinfer\nprint('flashinfer', flashinfer.__version__)\n")
BARE = "import flashinfer\nprint('flashinfer', flashinfer.__version__)\n"
# where 0.2.5's JIT would put its kernels: a folder named after the target archs it selected
ARCH = "from flashinfer.jit import env\nprint('workspace', env.FLASHINFER_WORKSPACE_DIR.name)\n" + BARE
_LINE = re.compile(r"^\d{4}-\d\d-\d\d [\d:,]+ - (?P<level>[A-Z]+) - (?P<msg>flashinfer\.jit: .*)$")


def _wheel(ctx, version: str) -> str:
    folder = _venv._tmp_root() / f"wheel-flashinfer-{version}-jit-only"
    found = sorted(folder.glob(f"flashinfer_python-{version}-*.whl"))
    if not found:
        env = _venv.venv(ctx, "fresh-" + b.PIP, pip=b.PIP)
        child = _venv.tool_env(VIRTUAL_ENV=str(env.path))
        child.pop("FLASHINFER_ENABLE_AOT", None)
        res = env.pip("wheel", "--no-deps", "--no-binary", "flashinfer-python", "-w", folder,
                      f"flashinfer-python=={version}", env=child, timeout=900)
        found = sorted(folder.glob(f"flashinfer_python-{version}-*.whl"))
        if not found:
            ctx.skip(f"could not build flashinfer-python {version} from its sdist: {res.tail(400)}")
    with zipfile.ZipFile(found[0]) as z:
        compiled = [n for n in z.namelist() if n.endswith(".so") or "flashinfer_kernels" in n]
    if compiled:
        raise RuntimeError(f"the wheel of {version} holds compiled modules: {compiled[:5]}")
    ctx.note(f"flashinfer-python {version}: {found[0].name} built from the PyPI sdist (pip {b.PIP}, isolated, "
             "FLASHINFER_ENABLE_AOT unset); no compiled module in it")
    return str(found[0])


def env(ctx, version: str) -> _venv.Venv:
    _, target = b.uv_env(ctx, f"fi-{version}-cpu-torch", *b.cpu_torch_requirement(), TRITON, _wheel(ctx, version))
    return target


def run(ctx, version: str, code: str = PROBE, **extra: str) -> _venv.Run:
    target = env(ctx, version)
    ws = _venv._tmp_root() / f"fi-ws-{version}"
    ws.mkdir(exist_ok=True)
    child = _venv.tool_env(VIRTUAL_ENV=str(target.path), FLASHINFER_WORKSPACE_BASE=str(ws))
    for name in ("FLASHINFER_ENABLE_AOT", "TORCH_CUDA_ARCH_LIST", "FLASHINFER_CUDA_ARCH_LIST"):
        child.pop(name, None)
    child.update(extra)
    res = _venv.run([target.python, "-c", code], env=child, cwd=_venv._tmp_root(), timeout=600)
    if not re.search(rf"^flashinfer {re.escape(version)}$", res.output, re.M):
        ctx.skip(f"flashinfer {version} did not import here ({_venv.last_exception(res.output, 300)}): {res.tail(400)}")
    lines = [m.group(0) for m in map(_LINE.match, res.output.splitlines()) if m]
    prebuilt = next((l for l in res.output.splitlines() if l.startswith("has_prebuilt_ops")), "")
    how = "logging at INFO" if code == PROBE else "no logging configuration"
    how += "".join(f", {k}={v}" for k, v in extra.items())
    ctx.note(f"{version}, {how}: imported; "
             f"{prebuilt or 'flashinfer.jit not probed'}; FlashInfer's logger printed {lines or 'nothing'}")
    return res


def relog(output: str) -> None:
    """Log again on `flashinfer.jit` each line FlashInfer's JIT logger printed, at its level."""
    log = logging.getLogger(LOGGER)
    for m in map(_LINE.match, output.splitlines()):
        if m:
            log.log(logging.getLevelName(m.group("level")), m.group("msg"))


def reproduce(ctx):
    ctx.expect_logged(LOGGER, relog, run(ctx, "0.2.1.post1").output, level=logging.INFO)
    run(ctx, "0.2.5", BARE)  # noted: what a user who configures no logging sees
    ctx.expect_logged(LOGGER, relog, run(ctx, "0.2.5").output, level=logging.INFO)


def fix_1(ctx):
    ctx.skip("installs an AOT wheel from flashinfer.ai's wheel index, which this machine cannot reach (PyPI only)")


def fix_2(ctx):
    # what can be seen without a GPU: which variable chooses the targets the JIT would compile for
    for name in ("FLASHINFER_CUDA_ARCH_LIST", "TORCH_CUDA_ARCH_LIST"):
        res = run(ctx, "0.2.5", ARCH, **{name: "9.0"})
        folder = next((l.split()[-1] for l in res.output.splitlines() if l.startswith("workspace ")), "?")
        ctx.note(f"0.2.5 with {name}=9.0: JIT workspace folder {folder!r}")
    ctx.skip("a JIT compile of a FlashInfer 0.2.5 kernel needs a CUDA build of torch (torch.utils.cpp_extension "
             "has no CUDA_HOME with a CPU-only torch) and a GPU to load it")


def control(ctx):
    res = run(ctx, "0.2.0.post2")
    ctx.not_logged(LOGGER, relog, res.output)
    ctx.call(_venv.finished, res, "flashinfer 0.2.0.post2", "import flashinfer on 0.2.0.post2")
    if "has_prebuilt_ops False" in res.output:
        ctx.note("0.2.0.post2 has no kernel modules either (has_prebuilt_ops False), and says nothing")
