"""verification/cases/_child.py: a step's code in a process of its own, with the step's
environment added, its printed lines read back. No torch here: the children save nothing."""

from __future__ import annotations

from types import SimpleNamespace

from verification.cases import _child, _venv


def test_a_child_runs_as_a_script_with_the_added_environment():
    code = "import os, sys\nprint('errkb: flag', os.environ['ERRKB_TEST_FLAG'])\nprint('errkb: file', __file__)\n"
    res, saved = _child.run(SimpleNamespace(), code, "child-env", env={"ERRKB_TEST_FLAG": "on"})
    assert res.returncode == 0 and saved is None
    assert _child.printed(res.output, "errkb: flag") == "on"
    assert _child.printed(res.output, "errkb: file").endswith("child-env.py"), "a file, so Triton can read kernel source"
    assert _child.printed(res.output, "errkb: absent") is None


def test_a_failing_child_leaves_its_exception_to_read():
    res, saved = _child.run(SimpleNamespace(), "raise RuntimeError('CUDA error: an illegal memory access was encountered')\n",
                            "child-fails")
    assert res.returncode != 0 and saved is None
    assert _venv.last_exception(res.output) == "RuntimeError: CUDA error: an illegal memory access was encountered"
