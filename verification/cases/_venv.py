"""Throwaway virtual environments for the install, build and import cases (env-build, env-modules).

These records are about what pip, uv, a package's setup.py or the dynamic loader print, so their
steps run the real tools in a virtual environment made for the step under the temporary folder,
with pinned versions, and read what the tools printed. Nothing here imports the packages under
test into the worker: every install and import runs in a child process.

- Downloads go through pip's and uv's own caches in ERRKB_VERIFY_CACHE (default
  ~/.cache/errkb-verify), never into the repository; wheels pip builds stay in a cache of the
  process's own (`pip_cache`).
- `run` never hangs: the child gets a process group of its own, killed at the timeout or, with
  `stop_at`, as soon as a line matching it is printed (a fix whose claim is settled once pip is past
  the step that failed, when the rest is a CUDA compile this machine cannot finish).
- `exception_lines`, `warning_lines` and `tool_message` read what a traceback, Python's warnings
  module and a command-line tool printed; `reraise` turns such a line back into an exception of
  the class the traceback names, so `ctx.expect_error` judges it like any other. A tool's own
  message (pip's, uv's) is raised as `ToolMessage` under the tool's name: its class is the tool
  that printed it.
"""

from __future__ import annotations

import atexit
import builtins
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from errkb import templates


def cache_dir() -> Path:
    path = Path(os.environ.get("ERRKB_VERIFY_CACHE") or Path.home() / ".cache" / "errkb-verify")
    path.mkdir(parents=True, exist_ok=True)
    return path


_PIP_HTTP_CACHES = ("http-v2", "http")  # pip 23.3 and later, and earlier releases
_pip_cache: Path | None = None


def pip_cache() -> Path:
    """pip's cache for this process: downloads shared through ERRKB_VERIFY_CACHE, wheels that pip
    builds kept apart and dropped at exit. pip installs a wheel it built once (say flash-attn with
    its CUDA build switched off) instead of building again, so a shared wheel cache would turn a
    later build-failure case into a refutation."""
    global _pip_cache
    if _pip_cache is None:
        folder = Path(tempfile.mkdtemp(prefix="errkb-pip-cache-"))
        for name in _PIP_HTTP_CACHES:
            shared = cache_dir() / "pip" / name
            shared.mkdir(parents=True, exist_ok=True)
            (folder / name).symlink_to(shared, target_is_directory=True)
        atexit.register(shutil.rmtree, folder, True)
        _pip_cache = folder
    return _pip_cache


def tool_env(**extra: str) -> dict:
    """The environment the tools run in: this one, with their caches outside the repository and
    nothing that would make them prompt or phone home for a version check."""
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV"):
        env.pop(name, None)
    env.update(PIP_CACHE_DIR=str(pip_cache()), UV_CACHE_DIR=str(cache_dir() / "uv"),
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


# ---------------------------------------------------------------- running a tool


@dataclass
class Run:
    argv: list[str]
    returncode: int | None
    output: str  # stdout and stderr together, as a terminal shows them
    stopped: bool = False  # killed because a line matched stop_at
    timed_out: bool = False

    def tail(self, n: int = 1500) -> str:
        return self.output[-n:]

    def summary(self) -> str:
        how = "stopped at the expected line" if self.stopped else "timed out" if self.timed_out \
            else f"exit {self.returncode}"
        argv = self.argv[8:] if self.argv[:1] == ["unshare"] else self.argv  # without_toolkit's wrapper
        where = " (in a mount namespace without a CUDA toolkit)" if self.argv[:1] == ["unshare"] else ""
        return f"`{' '.join(argv)}`{where}: {how}"


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run(argv, *, env: dict | None = None, cwd=None, timeout: float = 600, stop_at: str | None = None) -> Run:
    """argv run to its end, or until `timeout` seconds, or until a line matches `stop_at`; its whole
    process group is killed in the last two cases (pip's build subprocesses included)."""
    argv = [str(a) for a in argv]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=env if env is not None else tool_env(), cwd=cwd, start_new_session=True)
    lines: list[str] = []
    stopped = threading.Event()
    pattern = re.compile(stop_at) if stop_at else None

    def read():
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode("utf-8", "replace")
            lines.append(line)
            if pattern is not None and not stopped.is_set() and pattern.search(line):
                stopped.set()
                _kill_group(proc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = not stopped.is_set()
        _kill_group(proc)
        proc.wait()
    _kill_group(proc)  # anything the tool left running in its group
    reader.join(timeout=10)
    proc.stdout.close()
    return Run(argv, proc.returncode, "".join(lines), stopped=stopped.is_set(), timed_out=timed_out)


def in_terminal(argv) -> list[str]:
    """argv run under a pseudo-terminal (util-linux `script`), as at a user's terminal: pip then draws its
    spinner ('Building wheel for X (setup.py) ... error') where, writing into a pipe or a log, it writes
    'started' and "finished with status 'error'" lines instead (pip/_internal/cli/spinners.py, open_spinner).
    The output comes back with the terminal's colour codes and backspaces: read it through terminal_text."""
    return ["script", "-qefc", shlex.join(map(str, argv)), "/dev/null"]


_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def terminal_text(output: str) -> str:
    """What a terminal shows of `output`: colour and cursor escapes dropped, and on each line the
    backspaces and carriage returns applied (a spinner overwrites itself with the final status)."""
    shown = []
    for line in _ESCAPE.sub("", output).split("\n"):
        cells: list[str] = []
        col = 0
        for ch in line:
            if ch == "\r":
                col = 0
            elif ch == "\b":
                col = max(col - 1, 0)
            else:
                cells[col:col + 1] = [ch]
                col += 1
        shown.append("".join(cells).rstrip())
    return "\n".join(shown)


# ---------------------------------------------------------------- virtual environments


@dataclass
class Venv:
    path: Path
    notes: list[str] = field(default_factory=list)

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    def pip(self, *args, timeout: float = 900, stop_at: str | None = None, env: dict | None = None, cwd=None) -> Run:
        return run([self.python, "-m", "pip", *args], env=env or tool_env(VIRTUAL_ENV=str(self.path)),
                   timeout=timeout, stop_at=stop_at, cwd=cwd)

    def python_run(self, code: str, *, env: dict | None = None, timeout: float = 300, cwd=None, **extra: str) -> Run:
        """`code` run by this environment's Python; `extra` adds variables to tool_env()'s."""
        return run([self.python, "-c", code], env=env or tool_env(VIRTUAL_ENV=str(self.path), **extra), timeout=timeout,
                   cwd=cwd or tempfile.gettempdir())

    def version(self, dist: str) -> str | None:
        out = self.python_run(f"import importlib.metadata as m\ntry: print(m.version({dist!r}))\nexcept Exception: pass")
        return out.output.strip() or None


_made: dict[str, Venv] = {}
_root: list[Path] = []


def _tmp_root() -> Path:
    """Where the environments go: a new temporary folder removed when the worker ends, or
    ERRKB_VERIFY_VENVS, kept between runs (an environment already there with the same make-up is
    reused: for working on cases; a result run should start empty)."""
    if not _root:
        keep = os.environ.get("ERRKB_VERIFY_VENVS")
        if keep:
            _root.append(Path(keep))
            _root[0].mkdir(parents=True, exist_ok=True)
        else:
            sweep_stale_roots()
            _root.append(Path(tempfile.mkdtemp(prefix=f"errkb-venvs-{os.getpid()}-")))
            atexit.register(shutil.rmtree, _root[0], True)
    return _root[0]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale_roots(parent: Path | None = None) -> list[Path]:
    """Remove the environments of workers that are gone: the runner kills a worker that overruns
    a step, or that takes long to exit, so its atexit clean-up may never run (gigabytes of torch)."""
    removed = []
    for root in Path(parent or tempfile.gettempdir()).glob("errkb-venvs-*-*"):
        pid = root.name.split("-")[2]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(root, ignore_errors=True)
            removed.append(root)
    return removed


def noted(ctx, env: "Venv") -> "Venv":
    """The environment, after writing its set-up notes (what was installed, from where) into the
    step's notes once."""
    for note in env.notes:
        if note not in ctx.notes:
            ctx.note(note)
    return env


def interpreter(version: str | None = None) -> str | None:
    """This Python (the base interpreter of the worker's virtual environment), or a `pythonX.Y` on
    PATH or under pyenv; None when there is none."""
    if version is None or version == "%d.%d" % sys.version_info[:2]:
        return getattr(sys, "_base_executable", None) or sys.executable
    found = shutil.which(f"python{version}")
    if found and Path(found).parent.name != "shims":  # a pyenv shim fails unless that version is selected
        return found
    for root in (Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions",):
        for cand in sorted(root.glob(f"{version}.*/bin/python{version}")):
            return str(cand)
    return None


def venv(ctx, key: str, *, python: str | None = None, pip: str | None = None, install=(), timeout: float = 900) -> Venv:
    """A virtual environment made once per worker process under `key` (removed when the process
    ends): Python `python` (X.Y, default this one), pip pinned to `pip`, then `install` (pip
    arguments, e.g. ["torch==2.13.0+cpu", "wheel==0.45.1"]). A step whose environment cannot be
    made here is skipped with the reason (no such interpreter, a package the index does not have)."""
    if key in _made:
        return _made[key]
    exe = interpreter(python)
    if exe is None:
        ctx.skip(f"needs a Python {python} interpreter (none on PATH or under pyenv)")
    path = _tmp_root() / key
    recipe = repr((exe, pip, list(install)))
    stamp = path / ".errkb-recipe"
    if stamp.is_file() and stamp.read_text() == recipe:
        env = Venv(path, notes=[(path / ".errkb-notes").read_text()])
        _made[key] = env
        return env
    shutil.rmtree(path, ignore_errors=True)
    made = run([exe, "-m", "venv", path], timeout=300)
    if made.returncode != 0:
        raise RuntimeError(f"could not make the virtual environment: {made.tail()}")
    env = Venv(path)
    steps = ([["install", f"pip=={pip}"]] if pip else []) + ([["install", *install]] if install else [])
    for args in steps:
        res = env.pip(*args, timeout=timeout)
        if res.returncode != 0:
            ctx.skip(f"could not set up the environment ({' '.join(args)}): {res.tail(600)}")
    env.notes.append(f"venv {key}: Python {env.python_run('import platform; print(platform.python_version())').output.strip()}, "
                     f"pip {env.version('pip')}, setuptools {env.version('setuptools')}, wheel {env.version('wheel')}"
                     + (f", {' '.join(install)}" if install else ""))
    (path / ".errkb-notes").write_text(env.notes[0])
    stamp.write_text(recipe)
    _made[key] = env
    return env


# ---------------------------------------------------------------- a machine without a CUDA toolkit


def toolkit_paths() -> list[str]:
    """What torch.utils.cpp_extension would find a CUDA toolkit by: /usr/local/cuda (and its
    versioned siblings) and every nvcc on PATH."""
    found = [str(p) for p in sorted(Path("/usr/local").glob("cuda*"))]
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if folder and (Path(folder) / "nvcc").exists():
            found.append(str(Path(folder) / "nvcc"))
    return found


def without_toolkit(ctx, argv: list) -> list[str]:
    """argv wrapped so that it runs in a mount namespace of its own where no CUDA toolkit exists:
    each path of toolkit_paths() is hidden by an overlay whiteout (the files stay where they are
    for everyone else). Needs `unshare` and the right to mount; a step that cannot have it is skipped."""
    if shutil.which("unshare") is None:
        ctx.skip("needs unshare (util-linux) to hide the CUDA toolkit in a mount namespace")
    hidden = toolkit_paths()
    scratch = Path(tempfile.mkdtemp(prefix="errkb-nocuda-", dir=_tmp_root()))
    script = ["set -e", f's=$(mktemp -d -p {scratch})']  # a fresh upper/work pair per invocation
    for i, parent in enumerate(sorted({str(Path(p).parent) for p in hidden})):
        script.append(f'mkdir -p "$s/u{i}" "$s/w{i}"')
        script += [f'mknod "$s/u{i}/{Path(p).name}" c 0 0' for p in hidden if str(Path(p).parent) == parent]
        script.append(f'mount -t overlay overlay -o lowerdir={parent},upperdir="$s/u{i}",workdir="$s/w{i}" {parent}')
    script.append('for p in ' + " ".join(hidden) + '; do if [ -e "$p" ]; then echo "still there: $p" >&2; exit 97; fi; done')
    script.append('exec "$@"')
    probe = run(["unshare", "-m", "--propagation", "private", "sh", "-c", "\n".join(script), "sh", "true"], timeout=60)
    if probe.returncode != 0:
        ctx.skip(f"cannot hide the CUDA toolkit here (unshare/mount: {probe.tail(300).strip()})")
    ctx.note(f"ran in a mount namespace without {', '.join(hidden) or 'any CUDA toolkit (none was there)'}")
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", "\n".join(script), "sh", *map(str, argv)]


# ---------------------------------------------------------------- reading what was printed

_EXC_LINE = re.compile(r"^\s*(?:[│|]\s*)?(?P<cls>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))"
                       r"(?::\s(?P<msg>.*))?$")
_WARN_LINE = re.compile(r"^\s*(?P<file>\S.*?):(?P<line>\d+): (?P<cat>[A-Za-z_]\w*Warning): (?P<msg>.*)$")


def last_exception(output: str, width: int | None = None) -> str:
    """`Class: message` of the last exception a tool printed (the message cut at `width`)."""
    causes = exception_lines(output)
    return f"{causes[-1][0]}: {causes[-1][1][:width]}" if causes else "no exception"


def exception_lines(output: str) -> list[tuple[str, str]]:
    """(class, message) of every `Class: message` line a Python traceback printed, in order
    (indented lines too: pip prints its build subprocess's output inside a box)."""
    found = []
    for line in output.splitlines():
        m = _EXC_LINE.match(line)
        if m:
            found.append((m.group("cls"), (m.group("msg") or "").rstrip()))
    return found


def warning_lines(output: str) -> list[tuple[str, str]]:
    """(category, message) of every `file:line: Category: message` line Python's warnings printed."""
    return [(m.group("cat"), m.group("msg").rstrip()) for m in map(_WARN_LINE.match, output.splitlines()) if m]


def exception_class(name: str, base: type = Exception) -> type:
    """The builtin exception class of that name (a subclass of `base`), else a new subclass of
    `base` carrying the name."""
    short = name.rsplit(".", 1)[-1]
    cls = getattr(builtins, short, None)
    if isinstance(cls, type) and issubclass(cls, base):
        return cls
    return type(short, (base,), {"__module__": name.rsplit(".", 1)[0] if "." in name else "builtins"})


def standin_preamble(module: str) -> str:
    """Child-script lines that import `module` or, where it cannot load beside this machine's
    torch, put errkb's stand-in in its place (errkb/verify/standin.py) and print that they did."""
    root = str(Path(__file__).resolve().parents[2])
    return (f"import sys\nsys.path.append({root!r})\n"
            f"try:\n    import {module}\nexcept ImportError:\n"
            f"    from errkb.verify.standin import install\n    install({module!r})\n"
            f"    print('STANDIN {module}', flush=True)\n")


def reported(res, mark: str, what: str = "reported nothing") -> dict:
    """The JSON object a child process printed on the line starting with `mark` (how a case
    gets results out of an environment of its own); RuntimeError with the output's tail when
    it printed none."""
    line = next((l for l in res.output.splitlines() if l.startswith(mark)), None)
    if line is None:
        raise RuntimeError(f"the child {what}: {res.tail(1200)}")
    return json.loads(line[len(mark):])


def raise_reported(got: dict) -> dict:
    """Raise the exception a child reported as got["raised"] = [class name, message]; else
    return `got` (for ctx.expect_error and ctx.call)."""
    if got["raised"]:
        cls, message = got["raised"]
        raise exception_class(cls)(message)
    return got


def reraise(output: str, template: str | None = None, cls: str | None = None) -> None:
    """Raise the last traceback line of `output` whose message is an instance of `template` (any,
    without one; of class `cls` only, with one) as that class; nothing when there is none, so that
    `ctx.expect_error` reports that the call returned."""
    for name, message in reversed(exception_lines(output)):
        if cls is not None and name.rsplit(".", 1)[-1] != cls:
            continue
        if template is None or templates.search_regex(template).search(message):
            raise exception_class(name)(message)


def printed(res: Run, prefix: str) -> str:
    """The first line a claimed-good child run printed starting with `prefix` (what its last step
    reports); the exception it printed instead is raised, or an AssertionError with its tail."""
    reraise(res.output)
    line = next((line for line in res.output.splitlines() if line.startswith(prefix)), None)
    if line is None:
        raise AssertionError(f"no line starting {prefix!r}: {res.tail(400)}")
    return line


def within(ctx, res: Run, prefix: str, what: str, tol: float) -> float:
    """The number a claimed-good child run printed after `prefix` (a max difference), noted and
    checked against `tol`: an AssertionError over it, as from `printed` when the run failed."""
    err = float(printed(res, prefix).split()[1])
    ctx.note(f"{what}: max difference {err:.2e} (tolerance {tol})")
    if err > tol:
        raise AssertionError(f"{what}: max difference {err} over {tol}")
    return err


def printed_after(res: Run, marker: str, what: str, tool: str, template: str) -> None:
    """For ctx.expect_error: a child that got as far as printing `marker` printed the record's line
    (raised under `tool`'s name); one that did not raises what it printed, or says `what` failed."""
    if marker not in res.output:
        reraise(res.output)
        raise AssertionError(f"{what}: {res.tail(400)}")
    raise_tool_message(tool, res.output, template)


def finished(res: Run, marker: str, what: str) -> None:
    """A claimed-good child run: it printed no exception and printed `marker` (its last step got
    done); otherwise the exception it printed is raised, or an AssertionError saying `what` did
    not finish. Steps pass it to ctx.call, which refutes on either."""
    reraise(res.output)
    if marker not in res.output:
        raise AssertionError(f"{what} did not finish: {res.tail(400)}")


class ToolMessage(Exception):
    """A message a command-line tool printed (pip's, uv's): raised under the tool's name."""


def tool_message(output: str, template: str) -> str | None:
    """The text of the first place `output` holds an instance of `template` (whitespace and line
    breaks between words count as one space), or None."""
    m = templates.search_regex(template).search(output)
    return " ".join(m.group(0).split()) if m else None


def raise_tool_message(tool: str, output: str, template: str) -> None:
    text = tool_message(output, template)
    if text is not None:
        raise type(tool, (ToolMessage,), {})(text)
