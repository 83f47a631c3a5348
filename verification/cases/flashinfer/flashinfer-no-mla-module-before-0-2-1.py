"""`flashinfer.mla` with a FlashInfer older than 0.2.1: "module 'flashinfer' has no attribute 'mla'".

flashinfer-python 0.2.0.post2 and 0.2.1 are on PyPI as sdists. Each is built here into a wheel with pip 26.3
(`pip wheel --no-deps --no-build-isolation`) next to with_cpu_torch()'s torch (2.13.0+cpu, local wheel):
without CUDA kernels compiled ahead of time that is FlashInfer's JIT build, which imports on a CPU. Each
wheel is installed `--no-deps --target` into a folder of its own; Triton 3.5.1 comes from the cached wheel
(flashinfer/page.py imports triton). KTransformers is read from kvcache-ai/ktransformers at v0.2.3
(63b1c852) and v0.2.4 (ac95b6c7), exported from a local clone (verification/cases/_downstream.py): the
package's two light `__init__` files and operators/flashinfer_wrapper.py (v0.2.4 adds triton_attention.py
and util/vendors.py, which the wrapper imports there). Nothing is committed or stood in.

Reproduce: with 0.2.0.post2, `import flashinfer` works and `flashinfer.mla` raises the record's
AttributeError; KTransformers' MLAWrapper(1, 4, device='cpu') at v0.2.3 and v0.2.4 raises the same at its
`flashinfer.mla.BatchMLAPagedAttentionWrapper(...)` line (noted). Fix 1: with 0.2.1 the fix's check prints
the version; v0.2.3's MLAWrapper gets past the attribute into BatchMLAPagedAttentionWrapper's constructor,
which then stops on this machine's lack of pinned memory (a CPU limit, noted). v0.2.4's MLAWrapper passes
`bsz_tensor`, which 0.2.1's constructor does not take (noted: the TypeError the record's caveat now names).
Fix 2: with no FlashInfer, v0.2.3's wrapper prints 'flashinfer not found, use triton for linux' and sets
flashinfer_enabled to False (generation on the Triton path needs a GPU, not run)."""

from verification.cases import _builds as b
from verification.cases import _downstream, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
OLD, NEW = "0.2.0.post2", "0.2.1"
TRITON = "triton==3.5.1"
REPO = "kvcache-ai/ktransformers"
KT = {"v0.2.3": ("63b1c8525bdc132d70c9a1e9a3feb58e81e609af",
                 ("ktransformers/__init__.py", "ktransformers/operators/__init__.py",
                  "ktransformers/operators/flashinfer_wrapper.py")),
      "v0.2.4": ("ac95b6c710d8885da124535f8bc8332f0331687a",
                 ("ktransformers/__init__.py", "ktransformers/operators/__init__.py",
                  "ktransformers/operators/flashinfer_wrapper.py", "ktransformers/operators/triton_attention.py",
                  "ktransformers/util/vendors.py"))}
PROBE = "import flashinfer; print('ERRKB-VERSION', flashinfer.__version__, flush=True)\nflashinfer.mla\n"
CHECK = "import flashinfer, flashinfer.mla; print(flashinfer.__version__)"
KT_CHILD = ("import ktransformers.operators.flashinfer_wrapper as w\n"
            "print('ERRKB-ENABLED', w.flashinfer_enabled, flush=True)\n"
            "if w.flashinfer_enabled:\n"
            "    w.MLAWrapper(1, 4, use_cuda_graph=True, device='cpu')\n"
            "    print('ERRKB-BUILT', flush=True)\n")

_runs: dict = {}


def _flashinfer(ctx, env, version: str) -> str:
    folder = _venv._tmp_root() / f"target-flashinfer-{version}-sdist"
    if not (folder / ".errkb-done").exists():
        wheels = _venv._tmp_root() / f"wheel-flashinfer-{version}-cpu"
        res = env.pip("wheel", "--no-deps", "--no-build-isolation", "--no-binary", ":all:", "-w", wheels,
                      f"flashinfer-python=={version}", timeout=900)
        found = sorted(wheels.glob(f"flashinfer_python-{version}-*.whl"))
        if not found:
            ctx.skip(f"could not build flashinfer-python {version} from its sdist: {res.tail(400)}")
        res = env.pip("install", "--no-deps", "--target", folder, found[0], timeout=900)
        if res.returncode != 0:
            ctx.skip(f"could not install {found[0].name}: {res.tail(300)}")
        (folder / ".errkb-done").write_text(found[0].name)
    note = (f"flashinfer-python {version}: {(folder / '.errkb-done').read_text()} built from the PyPI sdist "
            "(pip 26.3 wheel --no-build-isolation, torch 2.13.0+cpu), pip --target --no-deps")
    if note not in ctx.notes:
        ctx.note(note)
    return str(folder)


def _run(ctx, version: str | None, code: str, kt: str | None = None) -> _venv.Run:
    key = (version, code, kt)
    if key not in _runs:
        env = b.with_cpu_torch(ctx)
        path = [_flashinfer(ctx, env, version)] if version else []
        if kt:
            commit, files = KT[kt]
            path.insert(0, str(_downstream.tree(ctx, REPO, commit, files)))
        _runs[key] = b.run_with_torch(ctx, code, env=env, path=[*path, b.cached_triton(ctx, TRITON, env)])
    res = _runs[key]
    shown = " | ".join(l for l in res.output.splitlines() if l.startswith(("ERRKB-", "found", "flashinfer not", "0.")))
    ctx.note(f"[flashinfer {version or 'absent'}{', KTransformers ' + kt if kt else ''}] {shown[:200]} "
             f"{_venv.last_exception(res.output, 200)}")
    return res


def reproduce(ctx):
    res = _run(ctx, OLD, PROBE)
    for kt in KT:
        _run(ctx, OLD, KT_CHILD, kt)

    def probe():
        if f"ERRKB-VERSION {OLD}" not in res.output:
            ctx.skip(f"flashinfer {OLD} did not import here: {res.tail(400)}")
        _venv.reraise(res.output)
    ctx.expect_error(probe)


def fix_1(ctx):
    check = _run(ctx, NEW, CHECK)
    kt3 = _run(ctx, NEW, KT_CHILD, "v0.2.3")
    _run(ctx, NEW, KT_CHILD, "v0.2.4")

    def works():
        _venv.reraise(check.output)
        if NEW not in check.output.split():
            raise AssertionError(f"the check did not print {NEW}: {check.tail(300)}")
        _venv.reraise(kt3.output, ctx.record["template"])
        if "ERRKB-ENABLED True" not in kt3.output or "flashinfer/mla.py" not in kt3.output:
            raise AssertionError(f"KTransformers v0.2.3 did not reach flashinfer.mla's constructor: {kt3.tail(400)}")
    ctx.call(works)


def fix_2(ctx):
    res = _run(ctx, None, KT_CHILD, "v0.2.3")

    def fallback():
        _venv.reraise(res.output)
        if "ERRKB-ENABLED False" not in res.output or "flashinfer not found, use triton for linux" not in res.output:
            raise AssertionError(f"the wrapper did not take its no-FlashInfer branch: {res.tail(400)}")
    ctx.call(fallback)
