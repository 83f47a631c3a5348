"""The fa2-no-kernel-image case passes on the child's error line as the parent's, whichever way
torch prints it: `RuntimeError: ...` (torch <= 2.8) or `torch.AcceleratorError: ...` (2.9+, the
run of 2026-12-06 that first said `refuted` because only the former was read)."""

import importlib.util
import subprocess
from pathlib import Path

import pytest

CASE = Path(__file__).resolve().parent.parent / "verification" / "cases" / "env-arch" / "fa2-no-kernel-image.py"
MESSAGE = "CUDA error: no kernel image is available for execution on the device"


class Ctx:
    def __init__(self):
        self.notes = []

    def note(self, text):
        self.notes.append(text)

    def skip(self, reason):
        raise AssertionError(f"skipped: {reason}")


@pytest.fixture()
def case(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("fa2_arch_case", CASE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (tmp_path / "flash_attn").mkdir()
    monkeypatch.setenv(module.SITE_VARIABLE, str(tmp_path))
    return module


@pytest.mark.parametrize("printed", [f"torch.AcceleratorError: {MESSAGE}", f"RuntimeError: {MESSAGE}"])
def test_the_childs_error_line_is_raised_word_for_word(case, monkeypatch, printed):
    stderr = f"Traceback (most recent call last):\n  File \"<string>\", line 6, in <module>\n{printed}\nSearch for x\n"
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1, "module: x.so\n", stderr))
    ctx = Ctx()
    with pytest.raises(RuntimeError) as raised:
        case._call_foreign_build(ctx)
    assert str(raised.value) == MESSAGE
    assert ctx.notes[-1] == "child raised " + printed.split(":")[0]


def test_a_child_that_did_not_fail_raises_nothing(case, monkeypatch):
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, "module: x.so\n", ""))
    ctx = Ctx()
    case._call_foreign_build(ctx)
    assert ctx.notes[-1].startswith("child exit status 0")
