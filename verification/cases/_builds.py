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
import shlex

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
    for note in env.notes:
        ctx.note(note)
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


def target_dir(ctx, requirement: str, *, no_deps: bool = False, env: _venv.Venv | None = None) -> str:
    """`pip install --target` of `requirement` (pip 26.3) into a folder of its own, put in front of
    with_torch()'s packages (or `env`'s) through PYTHONPATH by the steps: one torch for several
    releases of a pure-Python library."""
    folder = _venv._tmp_root() / ("target-" + os.path.basename(requirement).replace("=", "-").replace(" ", ""))
    stamp = folder / ".errkb-done"
    if not stamp.exists():
        env = env or with_torch(ctx)
        res = env.pip("install", "--target", folder, *(["--no-deps"] if no_deps else []), requirement, timeout=900)
        if res.returncode != 0:
            ctx.skip(f"could not install {requirement}: {res.tail(400)}")
        stamp.write_text(requirement)
    ctx.note(f"{requirement} installed with pip --target" + ("" if env else f", next to torch {torch_requirement()[0]}"))
    return str(folder)


def run_with_torch(ctx, code: str, *, path=(), cwd=None, timeout: float = 600, env: _venv.Venv | None = None,
                   extra_env: dict | None = None) -> _venv.Run:
    """`code` run by with_torch()'s Python (or `env`'s), with `path` in front on PYTHONPATH."""
    env = env or with_torch(ctx)
    extra = {"PYTHONPATH": os.pathsep.join(map(str, path))} if path else {}
    extra.update(extra_env or {})
    return _venv.run([env.python, "-c", code], env=_venv.tool_env(VIRTUAL_ENV=str(env.path), **extra),
                     cwd=cwd or _venv._tmp_root(), timeout=timeout)


# ---------------------------------------------------------------- imports in environments without the package


def fresh_import(ctx, code: str, *, python: str | None = None, cwd=None) -> _venv.Run:
    """`code` (an import) run by the Python of a new environment that holds only pip `PIP` (no torch, no
    attention library): the `No module named ...` records' situation."""
    env = _venv.venv(ctx, "fresh-" + PIP + (f"-py{python}" if python else ""), python=python, pip=PIP)
    res = env.python_run(code, cwd=cwd)
    for note in env.notes:
        ctx.note(note)
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
