"""`import flashinfer.<submodule>` with a flashinfer-python release older than that submodule:
"No module named 'flashinfer.comm'".

flashinfer-python 0.2.x is on PyPI as sdists only. Each release used here is a wheel built from its
PyPI sdist with pip 26.3 (`pip wheel --no-deps --no-build-isolation`, next to torch 2.14.1: its setup.py
imports torch; without CUDA kernels compiled ahead of time the wheel is FlashInfer's JIT build, which is
what `import flashinfer` loads on a CPU), then installed by uv 0.9.0 into an environment of its own with
torch 2.14.1 (PyPI, CUDA 13.0; it imports on a CPU). From 0.2.6.post1 on, setup.py writes the building
torch's `major.minor` into the wheel's requirements (`torch==2.14.*` here); the steps note it.

Reproduce: 0.2.5, `import flashinfer` works and `import flashinfer.comm` raises the record's message;
0.2.7.post1 raises it for flashinfer.logits_processor (the record's second example). The step also
notes what 0.2.6.post1 does (its flashinfer/comm.py is a single module: the import works, and a name
of the later package, trtllm_allreduce_fusion, is missing from it).
Fix 1: the fix's two commands in the 0.2.5 environment (`pip show`, then `pip install -U` of 0.2.8,
the first release with both submodules; `--no-build-isolation`, as the caveat says), then both
submodules import. Fix 2: the fix's one-liner lists the submodules: no comm on 0.2.5, comm and
logits_processor on 0.2.8."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
TORCH = "torch==2.14.1"
# what a pip build of the 0.2.8 sdist without isolation needs besides torch (its build-system
# requirements), and 0.2.8's own requirements, installed by uv from its cache first
BUILD_TOOLS = ("pip==26.3", "setuptools==80.9.0", "packaging", "wheel==0.45.1", "ninja", "numpy", "requests",
               "cuda-python", "pynvml", "einops", "nvidia-nvshmem-cu12")
PROBE = ("import flashinfer; print('flashinfer', flashinfer.__version__)\n"
         "import flashinfer.{sub}; print('imported', flashinfer.{sub}.__file__)")
FIX_2 = ("import flashinfer, pkgutil; print(flashinfer.__version__, "
         "[m.name for m in pkgutil.iter_modules(flashinfer.__path__)])")


def _wheel(ctx, version: str) -> str:
    folder = _venv._tmp_root() / f"wheel-flashinfer-{version}"
    found = sorted(folder.glob(f"flashinfer_python-{version}-*.whl"))
    if not found:
        env = b.with_torch(ctx)
        res = env.pip("wheel", "--no-deps", "--no-build-isolation", "-w", folder, f"flashinfer-python=={version}",
                      timeout=900)
        found = sorted(folder.glob(f"flashinfer_python-{version}-*.whl"))
        if not found:
            ctx.skip(f"could not build flashinfer-python {version} from its sdist: {res.tail(400)}")
    import zipfile

    with zipfile.ZipFile(found[0]) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    pins = [l.split(":", 1)[1].strip() for l in meta.splitlines() if l.startswith("Requires-Dist:") and "torch" in l]
    ctx.note(f"flashinfer-python {version}: {found[0].name} built from the PyPI sdist (pip 26.3, --no-build-isolation, "
             f"torch 2.14.1); its torch requirements: {pins}")
    return str(found[0])


def _env(ctx, version: str, *extra: str):
    return b.uv_env(ctx, f"flashinfer-{version}", TORCH, *extra, _wheel(ctx, version))


def _py(env, code):
    return _venv.run([env.python, "-c", code], env=_venv.tool_env(VIRTUAL_ENV=str(env.path)),
                     cwd=_venv._tmp_root(), timeout=600)


def _last(res):
    causes = _venv.exception_lines(res.output)
    return f"{causes[-1][0]}: {causes[-1][1]}" if causes else "no exception"


def _imported_top(ctx, res, version):
    if not re.search(rf"^flashinfer {re.escape(version)}$", res.output, re.M):
        ctx.skip(f"flashinfer {version} itself did not import here: {res.tail(400)}")


def reproduce(ctx):
    _, env7 = _env(ctx, "0.2.7.post1")
    res7 = _py(env7, PROBE.format(sub="logits_processor"))
    _imported_top(ctx, res7, "0.2.7.post1")
    ctx.note(f"0.2.7.post1, import flashinfer.logits_processor: {_last(res7)}")
    ctx.expect_error(_venv.reraise, res7.output, ctx.record["template"])

    _, env6 = _env(ctx, "0.2.6.post1")
    res6 = _py(env6, PROBE.format(sub="comm") + "\nfrom flashinfer.comm import trtllm_allreduce_fusion")
    ctx.note("0.2.6.post1, import flashinfer.comm: "
             + next((l for l in res6.output.splitlines() if l.startswith("imported")), "not imported")
             + f"; then from flashinfer.comm import trtllm_allreduce_fusion: {_last(res6)}")

    _, env5 = _env(ctx, "0.2.5")
    res5 = _py(env5, PROBE.format(sub="comm"))
    _imported_top(ctx, res5, "0.2.5")
    ctx.note(f"0.2.5, import flashinfer.comm: {_last(res5)}")
    ctx.expect_error(_venv.reraise, res5.output, ctx.record["template"])


def fix_1(ctx):
    _, env = b.uv_env(ctx, "flashinfer-0.2.5-upgrade", TORCH, *BUILD_TOOLS, _wheel(ctx, "0.2.5"))
    stamp = env.path / ".errkb-upgraded"
    show = env.pip("show", "flashinfer-python", timeout=120)
    ctx.note("pip show (before): " + " | ".join(show.output.splitlines()[:3]))
    if not stamp.exists():
        up = env.pip("install", "-U", "--no-build-isolation", "flashinfer-python==0.2.8", timeout=900)
        if up.returncode != 0:
            raise AssertionError(f"pip install -U --no-build-isolation flashinfer-python==0.2.8 failed: {up.tail(600)}")
        stamp.write_text(up.tail(300))
    ctx.note("pip install -U --no-build-isolation flashinfer-python==0.2.8: "
             + next((l for l in stamp.read_text().splitlines() if l.startswith("Successfully installed")), "done"))
    outs = [_py(env, PROBE.format(sub=sub)) for sub in ("comm", "logits_processor")]

    def imports():
        for res in outs:
            _venv.reraise(res.output)
            if not re.search(r"^flashinfer 0\.2\.8$", res.output, re.M) or "imported " not in res.output:
                raise AssertionError(res.tail(400))
        ctx.note("0.2.8: " + "; ".join(next(l for l in r.output.splitlines() if l.startswith("imported")) for r in outs))

    ctx.call(imports)


def fix_2(ctx):
    _, old = _env(ctx, "0.2.5")
    _, new = _env(ctx, "0.2.8")
    outs = {"0.2.5": _py(old, FIX_2), "0.2.8": _py(new, FIX_2)}

    def lists():
        found = {}
        for version, res in outs.items():
            _venv.reraise(res.output)
            line = next((l for l in res.output.splitlines() if l.startswith(version + " [")), None)
            if line is None:
                raise AssertionError(res.tail(400))
            found[version] = set(re.findall(r"'([^']+)'", line))
        if "comm" in found["0.2.5"] or not {"comm", "logits_processor"} <= found["0.2.8"]:
            raise AssertionError(f"submodules: {found}")
        ctx.note(f"0.2.5 lists {len(found['0.2.5'])} submodules, no comm; 0.2.8 lists {len(found['0.2.8'])}, "
                 "comm and logits_processor among them")

    ctx.call(lists)
