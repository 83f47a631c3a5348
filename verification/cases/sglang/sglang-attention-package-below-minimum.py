"""SGLang's start-up check raises 'flashinfer_python is installed with version X, which is less than the minimum
required version Y. ...' when the installed flashinfer-python is older than the release's minimum.

What runs: sglang 0.5.9's wheel from PyPI (`pip --target --no-deps`), with the pure-Python packages its
sglang/srt/utils/common.py imports (DEPS, one folder), Triton 3.5.1 from the cached wheel, and torch 2.13.0+cpu
(with_cpu_torch(), local wheel). flashinfer-python is installed `--no-deps --target` at two releases, each in
a folder of its own: 0.6.2 (below 0.5.9's minimum 0.6.3) and 0.6.3 (the version 0.5.9 pins); only its
distribution metadata is read, FlashInfer is never imported. Nothing is stood in.

The check sits in `_set_envs_and_config` of sglang/srt/entrypoints/engine.py, whose module imports SGLang's
compiled kernels and much of the server. The child therefore imports the real sglang.srt.utils.common (where
assert_pkg_version, get_bool_env_var, is_cuda, set_ulimit and kill_process_tree live) and compiles that one
function from the wheel's engine.py (read with ast at run time; nothing of it is committed) with those names,
os, time, random, signal and multiprocessing as its globals, then calls it with a server_args namespace
holding the fields it reads. On this machine is_cuda() is False, so the function's second check (sgl-kernel,
CUDA only) does not run: only the FlashInfer check is shown.

Reproduce: attention_backend 'flashinfer' with flashinfer-python 0.6.2 raises the record's Exception
("... version 0.6.2, which is less than the minimum required version 0.6.3. Please uninstall ..."). Fix 1:
0.5.9's wheel METADATA pins flashinfer_python==0.6.3; with 0.6.3 installed the same call returns. Fix 2: with
0.6.2 and attention_backend 'triton' the call returns. Fix 3: with 0.6.2, 'flashinfer' and
SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK=1 the call returns (what happens later with an old FlashInfer, the
caveat, is not run)."""

import re

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
SGLANG = "sglang==0.5.9"
OLD, PINNED = "0.6.2", "0.6.3"
TRITON = "triton==3.5.1"
# what `import sglang.srt.utils.common` (0.5.9) needs besides torch and triton, found by importing it
DEPS = ("numpy", "orjson", "psutil", "pybase64", "requests", "pyzmq", "packaging", "pillow", "starlette",
        "typing_extensions", "aiohttp", "pydantic", "ipython", "tqdm")

CHILD = r"""
import ast, multiprocessing, os, random, signal, sys, time, types, logging, traceback
import sglang, sglang.srt.utils.common as c
from importlib.metadata import version
print('ERRKB-VERSIONS sglang', version('sglang'), 'flashinfer_python', version('flashinfer_python'),
      'is_cuda', c.is_cuda(), flush=True)
path = os.path.join(os.path.dirname(sglang.__file__), 'srt', 'entrypoints', 'engine.py')
tree = ast.parse(open(path).read(), path)
fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == '_set_envs_and_config')
fn.args.args[0].annotation = None
names = dict(os=os, time=time, random=random, signal=signal, mp=multiprocessing,
             logger=logging.getLogger('sglang.srt.entrypoints.engine'), _is_cuda=c.is_cuda())
for name in ('assert_pkg_version', 'get_bool_env_var', 'set_prometheus_multiproc_dir', 'set_ulimit',
             'kill_process_tree'):
    names[name] = getattr(c, name)
exec(compile(ast.Module(body=[fn], type_ignores=[]), path, 'exec'), names)
args = types.SimpleNamespace(attention_backend={backend!r}, enable_symm_mem=False, enable_nccl_nvls=False,
                             enable_metrics=False, custom_sigquit_handler=None)
try:
    names['_set_envs_and_config'](args)
    print('ERRKB-RETURNED', flush=True)
except Exception as e:
    traceback.print_exc()
    print('ERRKB-RAISED', type(e).__name__ + '|' + str(e).replace(chr(10), ' '), flush=True)
"""

_runs: dict = {}


def _raised(res) -> None:
    """Raise again what the child's call raised (a bare `Exception: ...` line is not one that
    _venv.exception_lines reads, so the child prints it on a line of its own)."""
    line = next((l for l in res.output.splitlines() if l.startswith("ERRKB-RAISED ")), None)
    if line is not None:
        name, _, message = line[len("ERRKB-RAISED "):].partition("|")
        raise _venv.exception_class(name)(message)


def _folders(ctx, env):
    sgl = b.target_dir(ctx, SGLANG, no_deps=True, env=env)
    deps = b.pip_target(ctx, "target-sglang-0.5.9-deps", *DEPS, env=env, what="the import dependencies")
    tri = b.cached_triton(ctx, TRITON, env)
    note = f"{SGLANG} (--no-deps), {TRITON} (cached wheel), with " + " ".join(DEPS) + " (pip --target)"
    if note not in ctx.notes:
        ctx.note(note)
    return [sgl, str(deps), tri]


def _run(ctx, flashinfer: str, backend: str, skip_check: bool = False) -> _venv.Run:
    key = (flashinfer, backend, skip_check)
    if key not in _runs:
        env = b.with_cpu_torch(ctx)
        path = _folders(ctx, env)
        fi = b.target_dir(ctx, f"flashinfer-python=={flashinfer}", no_deps=True, env=env)
        extra = {"SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK": "1"} if skip_check else {}
        _runs[key] = b.run_with_torch(ctx, CHILD.format(backend=backend), env=env, path=[fi, *path], extra_env=extra)
    res = _runs[key]
    versions = next((l for l in res.output.splitlines() if l.startswith("ERRKB-VERSIONS")), "did not import")
    ctx.note(f"_set_envs_and_config(attention_backend={backend!r})" + (" with SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK=1"
             if skip_check else "") + f": {versions[15:]}"
             + next((" raised " + l[13:300] for l in res.output.splitlines() if l.startswith("ERRKB-RAISED ")),
                    " (returned)" if "ERRKB-RETURNED" in res.output else " (neither)"))
    if "ERRKB-VERSIONS" not in res.output:
        ctx.skip(f"sglang.srt.utils.common did not import here: {res.tail(400)}")
    return res


def _returned(ctx, res):
    def returned():
        _raised(res)
        if "ERRKB-RETURNED" not in res.output:
            _venv.reraise(res.output)
            raise AssertionError(f"the start-up function did not return: {res.tail(400)}")
    ctx.call(returned)


def reproduce(ctx):
    res = _run(ctx, OLD, "flashinfer")
    ctx.expect_error(lambda: _raised(res))


def fix_1(ctx):
    meta = b.wheel_metadata(ctx, "sglang", "0.5.9")
    pins = [l.split(":", 1)[1].strip() for l in meta.splitlines()
            if l.startswith("Requires-Dist:") and re.search(r"flashinfer|sgl.kernel", l)]
    ctx.note(f"sglang 0.5.9 METADATA: {pins}")
    res = _run(ctx, PINNED, "flashinfer")
    if not any(re.fullmatch(rf"flashinfer[_-]python\s*==\s*{re.escape(PINNED)}(\s*;.*)?", p) for p in pins):
        ctx.call(lambda: (_ for _ in ()).throw(AssertionError(f"0.5.9 does not pin flashinfer_python=={PINNED}: {pins}")))
        return
    _returned(ctx, res)


def fix_2(ctx):
    _returned(ctx, _run(ctx, OLD, "triton"))


def fix_3(ctx):
    _returned(ctx, _run(ctx, OLD, "flashinfer", skip_check=True))
