"""The helpers of the install/build cases (verification/cases/_venv.py, _builds.py): reading what
pip, uv and Python printed back into exceptions and warnings, and running a tool without ever
hanging. No network and no package installs: the tool runs here are this Python on short scripts."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest

from errkb.verify.case import Context, Refuted, Skip
from verification.cases import _builds, _venv

# What pip 26.3 printed for `pip install flash-attn==2.8.3` in an environment without torch (cut).
PIP_BOX = """\
Collecting flash-attn==2.8.3
  Getting requirements to build wheel: finished with status 'error'
  error: subprocess-exited-with-error

  × Getting requirements to build wheel did not run successfully.
  │ exit code: 1
  ╰─> [23 lines of output]
      Traceback (most recent call last):
        File "<string>", line 22, in <module>
      ModuleNotFoundError: No module named 'torch'
      [end of output]

  note: This error originates from a subprocess, and is likely not a problem with pip.
ERROR: Failed to build 'flash-attn' when getting requirements to build wheel
"""

# The same with -v: setup.py's output streams above the box.
PIP_VERBOSE = """\
  Traceback (most recent call last):
    File "<string>", line 22, in <module>
  ModuleNotFoundError: No module named 'torch'
  error: subprocess-exited-with-error

  × Getting requirements to build wheel did not run successfully.
  │ exit code: 1
  ╰─> No available output.
"""

UV_HINT = """\
      ModuleNotFoundError: No module named 'torch'

      hint: This error likely indicates that `flash-attn@2.8.3` depends
      on `torch`, but doesn't declare it as a build dependency. If
"""

WARNED = ("/tmp/x/setup.py:106: UserWarning: flash_attn was requested, but nvcc was not found.  Are you sure\n"
          "Traceback (most recent call last):\n"
          "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n")


def _ctx(error_class: str, template: str, kind: str = "error") -> Context:
    return Context({"error_class": error_class, "template": template, "kind": kind}, "reproduce")


def test_exception_lines_read_indented_tracebacks():
    assert _venv.exception_lines(PIP_BOX) == [("ModuleNotFoundError", "No module named 'torch'")]
    assert _venv.exception_lines(WARNED)[-1][0] == "OSError"
    assert _venv.exception_lines("Collecting x\nERROR: nothing here\n") == []


def test_warning_lines():
    assert _venv.warning_lines(WARNED) == [("UserWarning", "flash_attn was requested, but nvcc was not found.  Are you sure")]


def test_reraise_gives_the_printed_class_and_message():
    with pytest.raises(ModuleNotFoundError, match="No module named 'torch'"):
        _venv.reraise(PIP_BOX, "No module named 'torch'")
    _venv.reraise(PIP_BOX, "No module named 'numpy'")  # no instance: nothing raised
    with pytest.raises(OSError):
        _venv.reraise(WARNED, cls="OSError")
    odd = _venv.exception_class("pkg.SomeBuildError")
    assert odd.__name__ == "SomeBuildError" and issubclass(odd, Exception)
    assert issubclass(_venv.exception_class("SetuptoolsDeprecationWarning", Warning), Warning)


def test_tool_message_joins_wrapped_lines_and_names_the_tool():
    template = "This error likely indicates that {dist} depends on {dependency}, but doesn't declare it as a build dependency."
    assert _venv.tool_message(UV_HINT, template).startswith("This error likely indicates that `flash-attn@2.8.3` depends on")
    with pytest.raises(_venv.ToolMessage) as got:
        _venv.raise_tool_message("uv", UV_HINT, template)
    assert type(got.value).__name__ == "uv"
    _venv.raise_tool_message("uv", "nothing", template)  # no instance: nothing raised


def test_a_tool_message_is_judged_against_the_record_class():
    ctx = _ctx("pip subprocess-exited-with-error", "Getting requirements to build {target} did not run successfully.")
    ctx.expect_error(_venv.raise_tool_message, "pip", PIP_BOX, ctx.record["template"])
    assert ctx.observed["match"] == "full"
    other = _ctx("uv build failure", "Getting requirements to build {target} did not run successfully.")
    with pytest.raises(Refuted):  # pip printed it, the record says uv
        other.expect_error(_venv.raise_tool_message, "pip", PIP_BOX, other.record["template"])


def test_reemitted_warnings_reach_expect_warning():
    ctx = _ctx("UserWarning", "{option} was requested, but nvcc was not found.  Are you sure", kind="warning")
    ctx.expect_warning(_builds.reemit_warnings, WARNED)
    assert ctx.observed["class"] == "UserWarning"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _builds.reemit_warnings("no warnings here\n")


def test_box_names_cause_inside_or_above_the_box():
    ctx = _ctx("pip x", "y")
    _builds.box_names_cause(ctx, _venv.Run(["pip"], 1, PIP_BOX))
    assert "inside pip's box: ModuleNotFoundError" in ctx.notes[-1]
    _builds.box_names_cause(ctx, _venv.Run(["pip"], 1, PIP_VERBOSE))
    assert ctx.notes[-1].startswith("above pip's box")
    with pytest.raises(AssertionError):
        _builds.box_names_cause(ctx, _venv.Run(["pip"], 1, "  × Something did not run successfully.\n  ╰─> nothing\n"))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_past_metadata_refutes_on_the_record_message_and_skips_otherwise():
    ctx = _ctx("ModuleNotFoundError", "No module named 'torch'")
    with pytest.raises(ModuleNotFoundError):
        _builds.past_metadata(ctx, _venv.Run(["pip"], 1, PIP_BOX), "No module named 'torch'")
    with pytest.raises(Skip):
        _builds.past_metadata(ctx, _venv.Run(["pip"], 1, WARNED), "No module named 'torch'")
    _builds.past_metadata(ctx, _venv.Run(["pip"], None, "Preparing metadata (pyproject.toml): finished with status 'done'\n",
                                         stopped=True), "No module named 'torch'")


def test_run_stops_at_the_expected_line_and_at_the_timeout():
    code = "import sys, time\nprint('first', flush=True)\nprint('STOP here', flush=True)\ntime.sleep(120)\n"
    res = _venv.run([sys.executable, "-c", code], timeout=120, stop_at=r"STOP")
    assert res.stopped and not res.timed_out and "first" in res.output
    res = _venv.run([sys.executable, "-c", "import time; time.sleep(120)"], timeout=0.5)
    assert res.timed_out and not res.stopped and res.returncode != 0
    res = _venv.run([sys.executable, "-c", "print('ok')"], timeout=120)
    assert res.returncode == 0 and res.output.strip() == "ok" and not (res.stopped or res.timed_out)


def test_build_started_matches_pip_lines():
    import re

    pattern = re.compile(_builds.build_started("flash-attn"))
    assert pattern.search("  Preparing metadata (pyproject.toml): finished with status 'done'")
    assert pattern.search("  Preparing metadata (setup.py): finished with status 'done'")
    assert pattern.search("Building wheel for flash-attn (pyproject.toml): started")
    assert not pattern.search("  Preparing metadata (pyproject.toml): finished with status 'error'")


def test_summary_of_a_run_in_a_namespace_names_the_command():
    wrapped = ["unshare", "-m", "--propagation", "private", "sh", "-c", "script", "sh", "python", "-m", "pip"]
    text = _venv.Run(wrapped, 1, "").summary()
    assert text.startswith("`python -m pip` (in a mount namespace without a CUDA toolkit)")


def test_sweep_removes_only_roots_of_dead_workers(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = tmp_path / f"errkb-venvs-{dead.stdout.strip()}-abc"
    mine = tmp_path / f"errkb-venvs-{os.getpid()}-def"
    other = tmp_path / "errkb-venvs-notapid"
    for folder in (gone, mine, other):
        (folder / "torch-26.3").mkdir(parents=True)
    assert _venv.sweep_stale_roots(tmp_path) == [gone]
    assert not gone.exists() and mine.exists() and other.exists()


def test_interpreter_skips_pyenv_shims(tmp_path, monkeypatch):
    """A pyenv shim for python3.9 fails unless 3.9 is selected: the real binary under versions/ is used."""
    real = tmp_path / "versions" / "3.9.18" / "bin" / "python3.9"
    real.parent.mkdir(parents=True)
    real.write_text("")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    monkeypatch.setattr(_venv.shutil, "which", lambda name: str(tmp_path / "shims" / name))
    assert _venv.interpreter("3.9") == str(real)
    monkeypatch.setattr(_venv.shutil, "which", lambda name: "/usr/bin/" + name)
    assert _venv.interpreter("3.9") == "/usr/bin/python3.9"


# A source distribution pip can build offline: an in-tree PEP 517 backend that zips one module.
_BACKEND = '''
import base64, hashlib, zipfile

def _record(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = "tinypkg-1.0-py3-none-any.whl"
    files = {"tinypkg.py": b"", "tinypkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\\nName: tinypkg\\nVersion: 1.0\\n",
             "tinypkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}
    lines = [_record(n, d) for n, d in files.items()] + ["tinypkg-1.0.dist-info/RECORD,,"]
    with zipfile.ZipFile(f"{wheel_directory}/{name}", "w") as whl:
        for n, d in files.items():
            whl.writestr(n, d)
        whl.writestr("tinypkg-1.0.dist-info/RECORD", "\\n".join(lines) + "\\n")
    return name
'''


def test_a_wheel_pip_builds_stays_out_of_the_shared_cache(tmp_path, monkeypatch):
    """pip caches wheels it builds from an sdist and installs them instead of building next time:
    in the shared cache that would make a later build-failure case refute (docs/verification.md)."""
    import tarfile

    monkeypatch.setenv("ERRKB_VERIFY_CACHE", str(tmp_path / "shared"))
    monkeypatch.setattr(_venv, "_pip_cache", None)
    source = tmp_path / "tinypkg-1.0"
    source.mkdir()
    (source / "backend.py").write_text(_BACKEND)
    (source / "pyproject.toml").write_text('[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n')
    sdist = tmp_path / "tinypkg-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        tar.add(source, arcname="tinypkg-1.0")
    argv = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(tmp_path / "site"), str(sdist)]
    done = _venv.run(argv, env=_venv.tool_env(), timeout=120)
    assert done.returncode == 0, done.tail()
    assert (tmp_path / "site" / "tinypkg.py").is_file()
    built = list(_venv.pip_cache().rglob("tinypkg-1.0-py3-none-any.whl"))
    assert built, "pip did not cache the wheel it built: the test no longer shows anything"
    assert not list((tmp_path / "shared").rglob("*.whl"))
    assert (tmp_path / "shared" / "pip" / "http-v2").is_dir()


# What pip 24.2 wrote at a pseudo-terminal (`script`) for a failed flash-attn wheel build (cut): the spinner
# overwrites itself with backspaces, and the lines carry colour codes.
TTY_SPINNER = ("  Building wheel for flash-attn (setup.py) ... \x1b[?25l-\x08 \x08\\\x08 \x08|\x08 \x08error\r\n"
               "\x1b[31m  ERROR: Failed building wheel for flash-attn\x1b[0m\x1b[31m\r\n")

# torch 2.5.1 prints its CUDA mismatch on the lines below 'RuntimeError:', inside pip's box (cut).
MISMATCH = """\
        File "/x/torch/utils/cpp_extension.py", line 415, in _check_cuda_version
          raise RuntimeError(CUDA_MISMATCH_MESSAGE.format(cuda_str_version, torch.version.cuda))
      RuntimeError:
      The detected CUDA version (13.0) mismatches the version that was used to compile
      PyTorch (12.4). Please make sure to use the same CUDA versions.

      [end of output]
"""
MISMATCH_TEMPLATE = ("The detected CUDA version ({detected}) mismatches the version that was used to compile{sep}"
                     "PyTorch ({torch_cuda}). Please make sure to use the same CUDA versions.")


def test_terminal_text_applies_backspaces_and_drops_escapes():
    shown = _venv.terminal_text(TTY_SPINNER).splitlines()
    assert shown[0] == "  Building wheel for flash-attn (setup.py) ... error"
    assert shown[1] == "  ERROR: Failed building wheel for flash-attn"
    assert _venv.tool_message(_venv.terminal_text(TTY_SPINNER), "Building wheel for {package} ({how}) ... error")
    assert _venv.tool_message(TTY_SPINNER, "Building wheel for {package} ({how}) ... error") is None


def test_in_terminal_wraps_the_command_for_script():
    argv = _venv.in_terminal(["python", "-c", "print('a b')"])
    assert argv[:2] == ["script", "-qefc"] and argv[-1] == "/dev/null"
    assert argv[2] == "python -c 'print('\"'\"'a b'\"'\"')'"


def test_mismatch_in_raises_the_wrapped_message_as_its_class():
    with pytest.raises(RuntimeError) as got:
        _builds.mismatch_in(MISMATCH, MISMATCH_TEMPLATE)
    assert str(got.value) == ("The detected CUDA version (13.0) mismatches the version that was used to compile "
                              "PyTorch (12.4). Please make sure to use the same CUDA versions.")
    _builds.mismatch_in("nothing like it", MISMATCH_TEMPLATE)  # no message: nothing raised


def test_a_finished_child_run_printed_its_marker_and_no_exception():
    _venv.finished(_venv.Run(["python"], 0, "LOADED eager 4.45.2\n"), "LOADED eager", "the load")
    with pytest.raises(KeyError, match="sdpa"):
        _venv.finished(_venv.Run(["python"], 1, "Traceback (most recent call last):\nKeyError: 'sdpa'\n"),
                       "LOADED eager", "the load")
    with pytest.raises(AssertionError, match="the load did not finish"):
        _venv.finished(_venv.Run(["python"], 0, "loading...\n"), "LOADED eager", "the load")


def test_printed_reads_the_line_a_child_run_reports():
    assert _venv.printed(_venv.Run(["python"], 0, "x\nmaxerr 2.1e-07\n"), "maxerr ") == "maxerr 2.1e-07"
    with pytest.raises(AssertionError, match="no line starting 'BOUND '"):
        _venv.printed(_venv.Run(["python"], 0, "bound nothing\n"), "BOUND ")
    with pytest.raises(ImportError):
        _venv.printed(_venv.Run(["python"], 1, "ImportError: cannot import name 'x' from 'y'\nBOUND z\n"), "BOUND ")
