"""Pins and shared runs of the install/build cases (verification/cases/env-build, env-modules).

Every run happens in a throwaway virtual environment (verification/cases/_venv.py) and is made
once per worker process: records about the same pip run (the `No module named 'torch'` inside
pip's `Getting requirements to build wheel` box is one run, read by two records) share its output,
and each step notes the command and the versions it ran with.

Pins (docs/verification.md, "Install and build records on the CPU"):
- pip 26.3 (PEP 517 only, isolated builds by default) and pip 24.2 with setuptools 80.9.0 and
  wheel 0.45.1 present (so it takes the legacy `setup.py egg_info` route for a project without
  pyproject.toml);
- flash-attn 2.8.3 and xformers 0.0.16 (no wheel for CPython 3.11: pip takes the sdist) from PyPI;
- torch 2.14.1 (PyPI's Linux build, CUDA 13.0, with its nvidia-* wheels) where a step needs torch
  installed first: a CPU-only torch would not do, since torch.utils.cpp_extension sets CUDA_HOME
  to None whenever torch was built without CUDA (torch 2.13.0+cpu, cpp_extension.py line 359), and
  flash-attn's setup.py then stops on that before the wheel build. ERRKB_VERIFY_TORCH overrides the
  requirement; ERRKB_VERIFY_TORCH_ARGS adds pip arguments such as an --index-url.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from errkb import templates
from verification.cases import _venv

PIP = "26.3"
PIP_LEGACY = "24.2"
PIP_PY39 = "25.3"  # the last pip release that installs on CPython 3.9 (26.x needs 3.10)
SETUPTOOLS = "80.9.0"
WHEEL = "0.45.1"
FLASH_ATTN = "flash-attn==2.8.3"
XFORMERS_SDIST = "xformers==0.0.16"


def torch_requirement() -> list[str]:
    return [os.environ.get("ERRKB_VERIFY_TORCH", "torch==2.14.1"),
            *shlex.split(os.environ.get("ERRKB_VERIFY_TORCH_ARGS", ""))]


_runs: dict[tuple, _venv.Run] = {}


def _noted(ctx, env: _venv.Venv, key: tuple, res: _venv.Run) -> _venv.Run:
    _venv.noted(ctx, env)
    ctx.note(res.summary() + ("" if key not in _runs else " (output shared with the other steps of this run)"))
    _runs.setdefault(key, res)
    return res


def fresh_install(ctx, requirement: str, *, pip: str = PIP, legacy: bool = False, extra=(), timeout: float = 900):
    """`pip install <requirement>` in a new environment that has no torch: pip `pip`, with setuptools and
    wheel installed when `legacy` (pip <= 25.2 then runs setup.py egg_info itself)."""
    key = ("fresh", requirement, pip, legacy, tuple(extra))
    if key in _runs:
        return _noted(ctx, _venv.venv(ctx, "fresh-" + pip + ("-legacy" if legacy else "")), key, _runs[key])
    install = [f"setuptools=={SETUPTOOLS}", f"wheel=={WHEEL}"] if legacy else []
    env = _venv.venv(ctx, "fresh-" + pip + ("-legacy" if legacy else ""), pip=pip, install=install)
    return _noted(ctx, env, key, env.pip("install", *extra, requirement, timeout=timeout))


# A CPU-only build of torch (torch.version.cuda is None): what transformers' FlashAttention checks read
# as "not a CUDA build". PyPI has none for Linux; the default is the local wheel folder of this machine
# (ERRKB_VERIFY_CPU_TORCH_ARGS="--index-url https://download.pytorch.org/whl/cpu" where that is reachable).
CPU_TORCH = "torch==2.13.0+cpu"


def cpu_torch_requirement() -> list[str]:
    return [os.environ.get("ERRKB_VERIFY_CPU_TORCH", CPU_TORCH),
            *shlex.split(os.environ.get("ERRKB_VERIFY_CPU_TORCH_ARGS", "--find-links /opt/wheels"))]


def with_cpu_torch(ctx, pip: str = PIP) -> _venv.Venv:
    """with_torch() with a CPU-only torch build (cpu_torch_requirement) in place of PyPI's CUDA one."""
    return _venv.venv(ctx, "cpu-torch-" + pip, pip=pip,
                      install=[*cpu_torch_requirement(), "packaging", "ninja", "psutil", f"wheel=={WHEEL}",
                               f"setuptools=={SETUPTOOLS}"])


def with_torch(ctx, pip: str = PIP) -> _venv.Venv:
    """An environment where torch is installed first, with the build tools flash-attn's README and
    the records' fixes name (packaging, ninja, wheel, setuptools, psutil)."""
    return _venv.venv(ctx, "torch-" + pip, pip=pip,
                      install=[*torch_requirement(), "packaging", "ninja", "psutil", f"wheel=={WHEEL}",
                               f"setuptools=={SETUPTOOLS}"])


def build_started(package: str) -> str:
    """pip's line when the metadata step is done (setup.py imported torch and read the CUDA toolkit
    at its top), or when it starts building `package`'s wheel: whichever comes first. Stopping there
    keeps pip from resolving and downloading the package's pinned dependencies (an old torch)."""
    return rf"Preparing metadata \((?:setup\.py|pyproject\.toml)\): finished with status 'done'|Building wheel for {package}\b"


def pip_argv(ctx, env: _venv.Venv, pip: str) -> list:
    """How to run pip `pip` with env's Python: its own pip when that is the version, else pip's wheel
    from PyPI run as a zip (`python pip-X-py3-none-any.whl/pip ...`), which leaves env unchanged."""
    if pip == PIP:
        return [env.python, "-m", "pip"]
    folder = _venv.cache_dir() / "pip-wheels"
    wheel = folder / f"pip-{pip}-py3-none-any.whl"
    if not wheel.is_file():
        got = env.pip("download", "--no-deps", "--only-binary", ":all:", f"pip=={pip}", "-d", folder, timeout=300)
        if not wheel.is_file():
            ctx.skip(f"could not fetch pip {pip}'s wheel: {got.tail(300)}")
    return [env.python, wheel / "pip"]


def no_isolation_install(ctx, requirement: str, package: str, *, pip: str = PIP, wrap=None, env_extra=None,
                         timeout: float = 900):
    """`pip install --no-build-isolation <requirement>` (pip `pip`) in with_torch()'s environment,
    stopped as soon as pip starts building the wheel (compiling flash-attn's CUDA kernels takes hours;
    what the records' fixes claim is settled before). `wrap` turns the argv into another (without_toolkit)."""
    env = with_torch(ctx)
    argv = [*pip_argv(ctx, env, pip), "install", "--no-build-isolation", requirement]
    if wrap is not None:
        argv = wrap(ctx, argv)
    key = ("no-isolation", requirement, pip, bool(wrap), tuple(sorted((env_extra or {}).items())))
    if key in _runs:
        return _noted(ctx, env, key, _runs[key])
    res = _venv.run(argv, env=_venv.tool_env(VIRTUAL_ENV=str(env.path), **(env_extra or {})), timeout=timeout,
                    stop_at=build_started(package))
    ctx.note(f"pip {pip}")
    return _noted(ctx, env, key, res)


def reemit_warnings(output: str) -> None:
    """Emit again, in this process, every warning the tool's output shows (so ctx.expect_warning and
    ctx.call see what setup.py warned)."""
    import warnings

    for category, message in _venv.warning_lines(output):
        warnings.warn(message, _venv.exception_class(category, Warning), stacklevel=2)


_GOT_PAST = {"pip": "pip got past setup.py's metadata step (stopped there: the compile itself was not run)",
             "uv": "setup.py imported torch and started its bdist_wheel command; the compile itself was not run"}


def past_metadata(ctx, res: _venv.Run, template: str, tool: str = "pip") -> None:
    """A fix's check: pip (or uv) got as far as building the wheel, and did not print the record's
    message on the way. The record's message refutes (raised as what printed it, or warned again);
    stopping for another reason is no verdict (skipped, with what stopped it)."""
    reemit_warnings(res.output)
    _venv.reraise(res.output, template)
    if _venv.tool_message(res.output, template):
        raise _venv.ToolMessage(_venv.tool_message(res.output, template))
    if not res.stopped:
        causes = _venv.exception_lines(res.output)
        ctx.skip(f"{tool} stopped before building the wheel, for another reason ({causes[-1] if causes else res.tail(400)})")
    ctx.note(_GOT_PAST[tool])


def box_names_cause(ctx, res: _venv.Run) -> None:
    """A 'read the captured output' fix: setup.py's output, which pip shows inside its box (or, with
    -v, streams above a box that then says 'See above for output.' or 'No available output.'),
    ends in the exception that stopped setup.py."""
    lines = res.output.splitlines()
    heading = next((i for i, line in enumerate(lines) if line.strip().startswith("×")), None)
    if heading is None:
        raise AssertionError(f"pip drew no error box: {res.tail(600)}")
    end = next((i for i in range(heading, len(lines)) if "[end of output]" in lines[i]), None)
    where = "inside pip's box" if end is not None else "above pip's box (streamed by -v)"
    upto = "\n".join(lines[: (end if end is not None else heading)])
    causes = _venv.exception_lines(upto)
    if not causes:
        raise AssertionError(f"no exception line in setup.py's output: {upto[-600:]}")
    box = " ".join(lines[heading + 2].split()) if heading + 2 < len(lines) else ""
    ctx.note(f"{where}: {causes[-1][0]}: {causes[-1][1][:300]}" + ("" if end is not None else f"; the box: {box[:120]}"))

# ---------------------------------------------------------------- uv

UV = "0.9.0"


def flash_attn_without_isolation(ctx, tool: str = "pip") -> None:
    """The step of every flash-attn record whose fix is "torch first, then install without build
    isolation": the same install (pip, or uv) gets past the step the record's message comes from."""
    install = no_isolation_install(ctx, FLASH_ATTN, "flash-attn") if tool == "pip" else uv_no_isolation_install(ctx, FLASH_ATTN)
    ctx.call(past_metadata, ctx, install, ctx.record["template"], tool)


def uv_refuses_flash_attn(ctx) -> _venv.Run:
    """`uv pip install flash-attn` in a fresh environment must print the record's message (uv's own
    wording, raised as a tool message); returns the run for the step's notes."""
    res = uv_install(ctx, FLASH_ATTN)
    ctx.expect_error(_venv.raise_tool_message, "uv", res.output, ctx.record["template"])
    return res


def uv_install(ctx, requirement: str, *, uv: str = UV, extra=(), timeout: float = 900) -> _venv.Run:
    """`uv pip install <requirement>` (uv `uv`, from its PyPI wheel) into a new environment made by
    `uv venv` with this Python, which has no torch. uv's cache is ERRKB_VERIFY_CACHE's: uv resolves
    flash-attn's dependencies from the sdist's metadata and downloads them (torch and its CUDA
    wheels, 2.5 GB) while the build runs, so the first run is the slow one."""
    key = ("uv", requirement, uv, tuple(extra))
    tool = _venv.venv(ctx, f"uv-{uv}-tool", install=[f"uv=={uv}"])
    target = _venv._tmp_root() / f"uv-{uv}-target"
    if key in _runs:
        return _noted(ctx, tool, key, _runs[key])
    if not (target / "bin" / "python").exists():
        made = _venv.run([tool.bin("uv"), "venv", "-q", target, "--python", _venv.interpreter()], timeout=300)
        if made.returncode != 0:
            raise RuntimeError(f"uv venv failed: {made.tail()}")
    res = _venv.run([tool.bin("uv"), "pip", "install", "--python", target / "bin" / "python", *extra, requirement],
                    timeout=timeout)
    ctx.note(f"uv {uv}; target environment made by `uv venv` with Python {_venv.interpreter()}")
    return _noted(ctx, tool, key, res)


# flash-attn's setup.py prints this from its bdist_wheel command, after importing torch and reading
# the toolkit at its top (v2.8.3 setup.py): uv is then past everything but the compile.
FA_BDIST_LINE = r"Guessing wheel URL"


def uv_no_isolation_install(ctx, requirement: str, *, uv: str = UV, timeout: float = 900) -> _venv.Run:
    """`uv pip install -v --no-build-isolation <requirement>` into with_torch()'s environment, stopped once
    flash-attn's setup.py runs its bdist_wheel command (FA_BDIST_LINE): the compile is not run."""
    key = ("uv-no-isolation", requirement, uv)
    env = with_torch(ctx)
    tool = _venv.venv(ctx, f"uv-{uv}-tool", install=[f"uv=={uv}"])
    if key in _runs:
        return _noted(ctx, env, key, _runs[key])
    res = _venv.run([tool.bin("uv"), "pip", "install", "-v", "--python", env.python, "--no-build-isolation", requirement],
                    timeout=timeout, stop_at=FA_BDIST_LINE)
    ctx.note(f"uv {uv}")
    return _noted(ctx, env, key, res)


def only_binary_resolves(ctx, requirement: str, package: str) -> None:
    """`pip install --dry-run --only-binary <package> <requirement>` (pip 26.3, a new environment):
    pip finds a wheel for this Python and resolves its dependencies without building anything.
    --dry-run keeps the gigabytes of the old torch such a release pins from being installed; the
    choice of files is the same."""
    res = fresh_install(ctx, requirement, extra=("--dry-run", "--only-binary", package))
    would = [line for line in res.output.splitlines() if line.startswith("Would install")]
    if res.returncode != 0 or not would:
        raise AssertionError(f"pip did not resolve a wheel: {res.tail(800)}")
    if "Building wheel" in res.output or ".tar.gz" in res.output.split("Would install")[0].split(package)[-1][:0]:
        raise AssertionError("pip built something")
    ctx.note(would[0][:400])


def pip_target(ctx, name: str, *args, env: _venv.Venv, what: str) -> Path:
    """`pip install --target` of `args` into the folder `name`, once per machine (a stamp file
    says it is complete): a package set put in front of a torch through PYTHONPATH."""
    folder = _venv._tmp_root() / name
    stamp = folder / ".errkb-done"
    if not stamp.exists():
        res = env.pip("install", "--target", folder, *args, timeout=900)
        if res.returncode != 0:
            ctx.skip(f"could not install {what}: {res.tail(400)}")
        stamp.write_text(" ".join(map(str, args)))
    return folder


def torch_1_13_py310(ctx) -> _venv.Venv:
    """Python 3.10 with torch 1.13.1, the torch xformers 0.0.16's wheels were built against."""
    return _venv.noted(ctx, _venv.venv(ctx, "py310-torch-1.13.1", python="3.10", pip=PIP,
                                       install=["torch==1.13.1", "numpy<2"], timeout=1800))


def xformers_0_0_16(ctx) -> Path:
    """xformers 0.0.16's PyPI cp310 wheel in a --target folder of its own, for torch_1_13_py310."""
    return pip_target(ctx, "target-py310-xformers-0.0.16", "--no-deps", "xformers==0.0.16",
                      env=torch_1_13_py310(ctx), what="xformers 0.0.16's cp310 wheel")


def target_dir(ctx, requirement: str, *, no_deps: bool = False, env: _venv.Venv | None = None) -> str:
    """`pip install --target` of `requirement` (pip 26.3) into a folder of its own, put in front of
    with_torch()'s packages (or `env`'s) through PYTHONPATH by the steps: one torch for several
    releases of a pure-Python library."""
    name = "target-" + os.path.basename(requirement).replace("=", "-").replace(" ", "")
    folder = pip_target(ctx, name, *(["--no-deps"] if no_deps else []), requirement,
                        env=env or with_torch(ctx), what=requirement)
    ctx.note(f"{requirement} installed with pip --target" + ("" if env else f", next to torch {torch_requirement()[0]}"))
    return str(folder)


def cached_triton(ctx, requirement: str, env: _venv.Venv) -> str:
    """Triton `requirement` from the wheel cached under the download cache's triton/ (no index),
    `--no-deps --target`: a Triton release beside a CPU torch that ships another."""
    name = "target-" + requirement.replace("==", "-")
    folder = pip_target(ctx, name, "--no-deps", "--no-index", "--find-links", _venv.cache_dir() / "triton",
                        requirement, env=env, what=f"{requirement} from the cached wheel")
    return str(folder)


def run_with_torch(ctx, code: str, *, path=(), cwd=None, timeout: float = 600, env: _venv.Venv | None = None,
                   extra_env: dict | None = None) -> _venv.Run:
    """`code` run by with_torch()'s Python (or `env`'s), with `path` in front on PYTHONPATH."""
    env = env or with_torch(ctx)
    extra = {"PYTHONPATH": os.pathsep.join(map(str, path))} if path else {}
    extra.update(extra_env or {})
    return _venv.run([env.python, "-c", code], env=_venv.tool_env(VIRTUAL_ENV=str(env.path), **extra),
                     cwd=cwd or _venv._tmp_root(), timeout=timeout)


def run_with_release(ctx, code: str, requirement: str, *, extra_env: dict | None = None) -> _venv.Run:
    """`code` run by with_cpu_torch()'s Python with one release of a pure-Python library in front
    (target_dir): one CPU torch for every transformers release a case compares."""
    env = _venv.noted(ctx, with_cpu_torch(ctx))
    return run_with_torch(ctx, code, env=env, path=[target_dir(ctx, requirement, env=env)], extra_env=extra_env)


# ---------------------------------------------------------------- imports in environments without the package


def fresh_import(ctx, code: str, *, python: str | None = None, cwd=None) -> _venv.Run:
    """`code` (an import) run by the Python of a new environment that holds only pip `PIP` (no torch, no
    attention library): the `No module named ...` records' situation."""
    env = _venv.venv(ctx, "fresh-" + PIP + (f"-py{python}" if python else ""), python=python, pip=PIP)
    res = env.python_run(code, cwd=cwd)
    _venv.noted(ctx, env)
    ctx.note(f"`python -c {code!r}`: " + res.summary().split(": ", 1)[-1])
    return res


def fresh_import_refused(ctx, code: str) -> _venv.Run:
    """The reproduce step of a `No module named ...` record: `code` in a fresh environment must
    raise the record's message."""
    res = fresh_import(ctx, code)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])
    return res


def uv_env(ctx, key: str, *requirements: str, uv: str = UV) -> tuple[_venv.Venv, _venv.Venv]:
    """(uv's tool environment, a target environment made by `uv venv` holding `requirements`, installed by
    uv from its cache in ERRKB_VERIFY_CACHE: torch's 2.5 GB come from there, not from the network, once
    the uv cases have run)."""
    tool = _venv.venv(ctx, f"uv-{uv}-tool", install=[f"uv=={uv}"])
    target = _venv._tmp_root() / f"uv-{key}"
    stamp = target / ".errkb-recipe"
    if not (stamp.is_file() and stamp.read_text() == repr(requirements)):
        made = _venv.run([tool.bin("uv"), "venv", "-q", target, "--python", _venv.interpreter()], timeout=300)
        if made.returncode != 0:
            raise RuntimeError(f"uv venv failed: {made.tail()}")
        if requirements:
            res = _venv.run([tool.bin("uv"), "pip", "install", "--python", target / "bin" / "python", *requirements],
                            timeout=1200)
            if res.returncode != 0:
                ctx.skip(f"could not install {' '.join(requirements)} with uv: {res.tail(400)}")
        stamp.write_text(repr(requirements))
    ctx.note(f"environment made by uv {uv} (`uv venv`, Python {_venv.interpreter()})"
             + (f" with {' '.join(requirements)}" if requirements else ""))
    return tool, _venv.Venv(target)


def uv_pip(tool: _venv.Venv, env: _venv.Venv, *args: str, timeout: float = 900) -> _venv.Run:
    return _venv.run([tool.bin("uv"), "pip", *args, "--python", env.python], timeout=timeout)


def wheel_metadata(ctx, project: str, release: str) -> str:
    """The METADATA of `project==release`'s wheel from PyPI (downloaded once into the cache, no
    install): what a release declares it requires."""
    import zipfile

    folder = _venv.cache_dir() / "wheels"
    env = _venv.venv(ctx, "fresh-" + PIP, pip=PIP)
    found = sorted(folder.glob(f"{project}-{release}-*.whl"))
    if not found:
        got = env.pip("download", "--no-deps", "--only-binary", ":all:", f"{project}=={release}", "-d", folder, timeout=600)
        found = sorted(folder.glob(f"{project}-{release}-*.whl"))
        if not found:
            ctx.skip(f"could not download {project} {release}: {got.tail(300)}")
    with zipfile.ZipFile(found[0]) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return z.read(name).decode()


def flash_attn_source(ctx, version: str):
    """flash-attn `version`'s PyPI sdist (the git tag's tree, hopper/ included), downloaded once
    into the cache (with torch present: its setup.py imports torch to prepare metadata) and
    unpacked under the runner's temporary root; returns the unpacked folder."""
    import tarfile

    sdist = f"flash_attn-{version}.tar.gz"
    folder = _venv.cache_dir() / "sdists"
    if not (folder / sdist).is_file():
        env = with_torch(ctx)
        got = env.pip("download", "--no-deps", "--no-binary", ":all:", "--no-build-isolation", f"flash-attn=={version}",
                      "-d", folder, timeout=600)
        if not (folder / sdist).is_file():
            ctx.skip(f"could not download {sdist}: {got.tail(300)}")
    root = _venv._tmp_root() / f"flash_attn-{version}"
    if not root.is_dir():
        with tarfile.open(folder / sdist) as tar:
            tar.extractall(_venv._tmp_root(), filter="data")
    return root


def flash_attn_python_wheel(ctx, version: str, env: _venv.Venv | None = None) -> str:
    """A wheel of flash-attn `version` built from its PyPI sdist with its CUDA build switched off
    (FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE: the Python package alone, no flash_attn_2_cuda), once
    per run under the runner's temporary root, in with_torch()'s environment or `env`; returns its
    path. For claims about which modules and names a release ships, decidable without a GPU. Built
    in a CPU-only torch's environment, FLASH_ATTENTION_FORCE_BUILD=TRUE keeps setup.py from guessing
    a prebuilt wheel's URL, which it derives from torch.version.cuda (None there)."""
    folder = _venv._tmp_root() / f"wheel-flash-attn-{version}-skip-cuda-build"
    found = sorted(folder.glob(f"flash_attn-{version}-*.whl"))
    if not found:
        extra = {"FLASH_ATTENTION_FORCE_BUILD": "TRUE"} if env is not None else {}
        env = env or with_torch(ctx)
        res = env.pip("wheel", "--no-deps", "--no-build-isolation", "-w", folder, f"flash-attn=={version}", timeout=900,
                      env=_venv.tool_env(VIRTUAL_ENV=str(env.path), FLASH_ATTENTION_SKIP_CUDA_BUILD="TRUE", **extra))
        found = sorted(folder.glob(f"flash_attn-{version}-*.whl"))
        if not found:
            ctx.skip(f"could not build flash-attn {version} with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE: {res.tail(400)}")
    ctx.note(f"flash-attn {version} wheel built from the sdist with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE: {found[0].name}")
    return str(found[0])


# ---------------------------------------------------------------- a CUDA torch and a toolkit of another CUDA version

# PyPI's Linux builds of torch, installed by uv from its cache (hard links, no download): 2.5.1 is built
# for CUDA 12.4, 2.14.1 for CUDA 13.0, the release of this machine's nvcc (/usr/local/cuda-13.0).
TORCH_CU124 = "torch==2.5.1"
TORCH_CU130 = "torch==2.14.1"
TOOLKIT = "/usr/local/cuda-13.0"
BUILD_TOOLS = (f"setuptools=={SETUPTOOLS}", f"wheel=={WHEEL}", "packaging", "ninja", "psutil")
# setuptools' build_ext prints this for each extension; torch's BuildExtension.build_extensions checks the
# CUDA versions before it hands the extensions on (torch/utils/cpp_extension.py, torch 2.5.1 and 2.14.1),
# so the line means the check has passed and compiling is about to start
BUILD_EXT_STARTS = r"building '[\w.]+' extension"


def cuda_torch_env(ctx, torch: str = TORCH_CU124) -> _venv.Venv:
    """An environment made by uv with PyPI's CUDA build `torch`, pip `PIP` and the build tools flash-attn's
    README names (torch first, as the records' fixes say)."""
    _, env = uv_env(ctx, "build-" + torch.replace("==", "-"), torch, f"pip=={PIP}", *BUILD_TOOLS)
    return env


def toolkit_build(ctx, requirement: str, *, torch: str = TORCH_CU124, pip: str = PIP, extra=(), tty: bool = False,
                  env_extra: dict | None = None, stop_at: str | None = None, timeout: float = 900) -> _venv.Run:
    """`pip install --no-build-isolation --no-deps [extra] <requirement>` with pip `pip` next to `torch`, with
    this machine's nvcc 13.0 (CUDA_HOME unset: torch finds /usr/local/cuda). With torch 2.5.1 (CUDA 12.4)
    the build fails within seconds, as soon as torch's BuildExtension compares the two CUDA versions;
    with torch 2.14.1 (CUDA 13.0) it gets past that check (`stop_at` ends it there). `tty` runs pip under
    a pseudo-terminal (the output is then what the terminal shows). One run per worker and arguments."""
    env = cuda_torch_env(ctx, torch)
    extra_env = dict(env_extra or {})
    key = ("toolkit", requirement, torch, pip, tuple(extra), tty, tuple(sorted(extra_env.items())), stop_at)
    if key in _runs:
        return _noted(ctx, env, key, _runs[key])
    argv = [*pip_argv(ctx, env, pip), "install", *extra, "--no-build-isolation", "--no-deps", requirement]
    res = _venv.run(_venv.in_terminal(argv) if tty else argv, env=_venv.tool_env(VIRTUAL_ENV=str(env.path), **extra_env),
                    timeout=timeout, stop_at=stop_at)
    if tty:
        res = _venv.Run([str(a) for a in argv], res.returncode, _venv.terminal_text(res.output), res.stopped, res.timed_out)
    ctx.note(f"pip {pip}, {torch}, nvcc {nvcc_release(extra_env.get('CUDA_HOME', '/usr/local/cuda'))}"
             + (" (under a pseudo-terminal)" if tty else "")
             + "".join(f", {k}={v}" for k, v in sorted(extra_env.items()) if k != "PATH"))
    return _noted(ctx, env, key, res)


def nvcc_release(cuda_home: str) -> str:
    got = _venv.run([os.path.join(cuda_home, "bin", "nvcc"), "--version"], timeout=60)
    found = [ln for ln in got.output.splitlines() if "release" in ln]
    return found[0].split("release", 1)[1].split(",")[0].strip() if found else f"not found at {cuda_home}"


def mismatch_in(output: str, template: str) -> None:
    """Raise torch's CUDA mismatch RuntimeError that a build printed: torch 2.5.1 writes the message on
    the lines below 'RuntimeError:', so it is read as text (lines joined) and raised as the class of
    the last exception line before it."""
    text = _venv.tool_message(output, template)
    if text is None:
        return
    head = output[: templates.search_regex(template).search(output).start()]
    causes = _venv.exception_lines(head)
    raise _venv.exception_class(causes[-1][0] if causes else "RuntimeError")(text)


def fa_mismatch_build(ctx, *, pip: str = PIP, extra=(), tty: bool = False) -> _venv.Run:
    """flash-attn 2.8.3 from PyPI's sdist next to torch 2.5.1 (CUDA 12.4) with nvcc 13.0: the wheel build
    fails seconds in on torch's CUDA version check. FLASH_ATTENTION_FORCE_BUILD=TRUE skips setup.py's guess
    of a release wheel (v2.8.3 publishes one for torch 2.5 and CPython 3.11, so a machine that reaches
    GitHub would install it; this one cannot reach GitHub and ends in the same source build either way)."""
    res = toolkit_build(ctx, FLASH_ATTN, pip=pip, extra=extra, tty=tty, env_extra={"FLASH_ATTENTION_FORCE_BUILD": "TRUE"})
    if "Building wheel for flash" not in res.output:
        ctx.skip(f"pip did not get to building the wheel: {res.tail(400)}")
    return res


def matched_toolkit_build(ctx, requirement: str, package: str, env_extra: dict | None = None) -> _venv.Run:
    """A fix's run: `requirement` built with a torch and a toolkit of the same CUDA major version (torch 2.14.1,
    CUDA 13.0, and CUDA_HOME=/usr/local/cuda-13.0, on PATH first), stopped once torch's version check has
    passed and the extension's compile is about to start (the compile itself takes hours on two cores). No CUDA 12 nvcc is
    on this machine or on PyPI (nvidia-cuda-nvcc-cu12 12.4.131 to 12.9.86 ship ptxas only), so the pair is
    made on torch's side."""
    extra = {"CUDA_HOME": TOOLKIT, "PATH": f"{TOOLKIT}/bin:" + os.environ.get("PATH", ""), **(env_extra or {})}
    res = toolkit_build(ctx, requirement, torch=TORCH_CU130, env_extra=extra, stop_at=BUILD_EXT_STARTS, extra=("-v",))
    if f"Building wheel for {package}" not in res.output:
        ctx.skip(f"pip did not get to building the wheel: {res.tail(400)}")
    return res


def compiles_past_check(ctx, res: _venv.Run, template: str) -> None:
    """A fix's check on matched_toolkit_build's run: no CUDA mismatch (the record's message, or torch's)
    and the build got as far as compiling the extension."""
    mismatch_in(res.output, template)
    if "mismatches the version that was used to compile" in res.output:
        line = next(ln for ln in res.output.splitlines() if "mismatches the version" in ln)
        raise AssertionError(f"torch still refused the toolkit: {' '.join(line.split())}")
    if not res.stopped:
        ctx.skip(f"the build stopped before compiling, for another reason ({_venv.last_exception(res.output, 300)})")
    ctx.note("torch's CUDA version check passed and setuptools started building the extension (stopped there: the compile was not run)")


def fa_compile_recipe(ctx) -> _venv.Run:
    """The pip records' "if you must compile" recipe as written (torch and the build tools first, MAX_JOBS=4,
    FLASH_ATTN_CUDA_ARCHS=80, `pip install -v flash-attn --no-build-isolation`), with torch 2.14.1 (CUDA 13.0)
    and CUDA_HOME=/usr/local/cuda-13.0, run to its end: flash-attn 2.8.3's sources do not compile against
    torch 2.14.1's headers (they need C++20; its setup.py passes -std=c++17), so ninja stops on the first
    objects within minutes, after printing their nvcc command lines."""
    extra = {"CUDA_HOME": TOOLKIT, "PATH": f"{TOOLKIT}/bin:" + os.environ.get("PATH", ""), "MAX_JOBS": "4",
             "FLASH_ATTN_CUDA_ARCHS": "80"}
    res = toolkit_build(ctx, FLASH_ATTN, torch=TORCH_CU130, env_extra=extra, extra=("-v",), timeout=1500)
    if "Building wheel for flash-attn" not in res.output:
        ctx.skip(f"pip did not get to building the wheel: {res.tail(400)}")
    return res


FA_RECIPE_GREP = r"FAILED:|error:|Error|Killed"  # the recipe's `grep -n -m 20 -E ...` on the -v log
RECIPE_CANNOT_FINISH = ("the recipe's steps were checked (notes), but no flash-attn compile can finish here: the only "
                        "torch matching this machine's CUDA 13.0 toolkit is 2.14.1, whose headers flash-attn 2.8.3 does "
                        "not compile against (C++20 needed), and no CUDA 12 nvcc is on this machine or on PyPI; "
                        "so pip still ends in a failed wheel build")


# ---------------------------------------------------------------- fixes the flash-attn pip records share
# The records of pip's closing lines for a failed flash-attn build give the same advice; their case
# files bind these steps (`fix_1 = b.release_wheel_fix`) instead of writing them again.


def release_wheel_fix(ctx):
    """Install a matching release wheel from flash-attn's GitHub releases."""
    ctx.skip("installs a release wheel from GitHub (not reachable from here; PyPI has no flash-attn wheels)")


def compile_recipe_fix(ctx):
    """Build from source with the records' recipe: its parts are checked, the compile cannot finish here."""
    recipe_parts(ctx, fa_compile_recipe(ctx))
    ctx.skip(RECIPE_CANNOT_FINISH)


def windows_fix(ctx):
    """The Windows-only advice."""
    ctx.skip("Windows (no Windows machine here)")


def recipe_parts(ctx, res: _venv.Run) -> None:
    """fa_compile_recipe's checks, each an AssertionError when the recipe does not do what it says: without
    build isolation setup.py's metadata step imports the installed torch; torch accepts the toolkit; every
    nvcc command gets FLASH_ATTN_CUDA_ARCHS's arch and no other (torch adds no -gencode of its own); the
    recipe's grep shows the compile error among its 20 lines."""
    if "Preparing metadata (pyproject.toml): finished with status 'done'" not in res.output:
        raise AssertionError(f"setup.py's metadata step did not pass without build isolation: {res.tail(400)}")
    if "mismatches the version that was used to compile" in res.output:
        raise AssertionError("torch refused the toolkit")
    nvcc = [ln for ln in res.output.splitlines() if "/bin/nvcc " in ln and " -c " in ln]
    if not nvcc:
        ctx.skip(f"no nvcc command was printed (the build stopped before compiling: {_venv.last_exception(res.output, 300)})")
    archs = sorted({m for ln in nvcc for m in re.findall(r"-gencode[= ]+(arch=\S+)", ln)})
    if archs != ["arch=compute_80,code=sm_80"]:
        raise AssertionError(f"FLASH_ATTN_CUDA_ARCHS=80 gave the nvcc commands {archs}")
    hits = [ln.strip() for ln in res.output.splitlines() if re.search(FA_RECIPE_GREP, ln)][:20]
    if not any(h.startswith("FAILED:") or "error:" in h for h in hits):
        raise AssertionError(f"the recipe's grep shows no compile error in its 20 lines: {hits[:5]}")
    ctx.note("metadata step passed without build isolation; torch's CUDA check passed (13.0 and 13.0)")
    ctx.note(f"{len(nvcc)} nvcc command(s) printed, each with -gencode {archs[0]} only")
    ctx.note("the grep's first lines: " + " | ".join(h[:160] for h in hits[:3]))
    ctx.note(f"the build ended on {_venv.last_exception(res.output, 120)}")


def pip_tags_fix(ctx, listed: str, absent: str) -> None:
    """The fix that reads `pip debug --verbose`: in a fresh pip (PIP) the compatible tags hold
    `listed` and nothing with `absent`, which is why pip calls the wheel unsupported here."""
    env = _venv.venv(ctx, "fresh-" + PIP, pip=PIP)
    res = env.pip("debug", "--verbose", timeout=120)

    def tags_explain():
        tags = res.output.split("Compatible tags", 1)[-1]
        if listed not in tags or absent in tags:
            raise AssertionError(f"unexpected compatible tags: {tags[:600]}")
        ctx.note(f"pip debug: {listed} listed, no {absent}")

    ctx.call(tags_explain)

