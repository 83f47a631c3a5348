"""The shared helpers of the CPU-run cases (xformers, flash-attn's Python API, Triton compiles for a
named target): the parts that need none of those libraries, so they run here without them."""

from __future__ import annotations

from importlib import import_module

import pytest

from errkb.verify.case import Context, Refuted, Skip

compile_helper = import_module("verification.cases.triton._compile")
xf = import_module("verification.cases.xformers._xf")
fa_py = import_module("verification.cases.flash-attn._fa_py")

RECORD = {"id": "r", "kind": "error", "error_class": "ValueError", "template": "type {dtype} not supported here",
          "backends": ["triton"]}


def _ctx(record=RECORD):
    return Context(record, "reproduce")


# ---------------------------------------------------------------- Triton compile child
def test_child_script_is_valid_python_and_prints_the_mark():
    compile(compile_helper.CHILD, "<child>", "exec")
    assert compile_helper.MARK.strip() in compile_helper.CHILD


def test_parse_takes_the_last_answer_line_and_refuses_a_silent_child():
    out = "noise\nERRKB-TRITON-RESULT {\"ok\": false}\nERRKB-TRITON-RESULT {\"ok\": true, \"stages\": [\"ttir\"]}\n"
    assert compile_helper.parse(out, "", 0) == {"ok": True, "stages": ["ttir"]}
    with pytest.raises(RuntimeError, match="exit status -11"):
        compile_helper.parse("no answer", "Segmentation fault", -11)


def test_rebuilt_chain_keeps_classes_messages_and_causes():
    chain = [{"class": "CompilationError", "module": "triton.compiler.errors", "message": "at 5:9:\n  tl.dot(q, k)"},
             {"class": "ValueError", "module": "builtins", "message": "type fp8e4nv not supported here"}]
    top = compile_helper.rebuild(chain)
    assert type(top).__name__ == "CompilationError" and type(top).__module__ == "triton.compiler.errors"
    assert not isinstance(top, ValueError)
    assert type(top.__cause__) is ValueError and str(top.__cause__) == "type fp8e4nv not supported here"
    assert top.__cause__.__cause__ is None


def test_a_rebuilt_failure_is_judged_like_the_original_call():
    result = {"ok": False, "triton": "3.5.1", "chain": [
        {"class": "CompilationError", "module": "triton.compiler.errors", "message": "at 1:0:"},
        {"class": "ValueError", "module": "builtins", "message": "type fp8e4nv not supported here"}]}
    ctx = _ctx()
    ctx.expect_error(lambda: compile_helper.reraise(result))
    assert ctx.observed["class"] == "ValueError" and ctx.observed["wrapped_in"] == "triton.compiler.errors.CompilationError"
    other = {"ok": False, "triton": "3.5.1", "chain": [{"class": "TypeError", "module": "builtins", "message": "no"}]}
    with pytest.raises(Refuted):
        _ctx().expect_error(lambda: compile_helper.reraise(other))


def test_a_builtin_name_from_another_module_is_not_taken_for_the_builtin():
    exc = compile_helper.rebuild([{"class": "ValueError", "module": "somewhere.else", "message": "m"}])
    assert type(exc) is not ValueError and type(exc).__name__ == "ValueError"


def test_compiled_notes_success_and_refutes_failure():
    ctx = _ctx()
    compile_helper.compiled(ctx, {"ok": True, "stages": ["cubin", "llir", "ptx", "ttir"], "triton": "3.0.0"}, "k")
    assert "compiled down to cubin (Triton 3.0.0)" in ctx.notes[0]
    ctx = _ctx()
    with pytest.raises(Refuted, match="the compile raised PTXASError"):
        compile_helper.compiled(ctx, {"ok": False, "triton": "3.5.1", "chain": [
            {"class": "PTXASError", "module": "triton.runtime.errors", "message": "ptxas failed"}]}, "k")
    assert ctx.observed["class"] == "PTXASError"


# ---------------------------------------------------------------- xformers versions
@pytest.mark.parametrize("text, expected", [("0.0.28.post3", (0, 0, 28)), ("0.0.24+cu121", (0, 0, 24)),
                                            ("0.0.29.dev940", (0, 0, 29)), ("0.0.35", (0, 0, 35))])
def test_xformers_version_tuple(text, expected):
    assert xf.version_tuple(text) == expected


def test_xformers_in_range_is_half_open():
    assert xf.in_range("0.0.28.post3", low="0.0.28")
    assert not xf.in_range("0.0.28.post3", below="0.0.28")
    assert xf.in_range("0.0.24", below="0.0.25") and not xf.in_range("0.0.24", low="0.0.25")


# ---------------------------------------------------------------- flash-attn trees
def _tree(tmp_path, version):
    pkg = tmp_path / "flash_attn"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(f'__version__ = "{version}"\n\nraise RuntimeError("must not be imported")\n')
    return tmp_path


def test_tree_version_reads_without_importing(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(_tree(tmp_path, "2.5.9.post1")))
    assert fa_py.tree_version() == "2.5.9.post1"
    assert fa_py.compiled_name("2.5.9.post1") == "flash_attn_2_cuda"
    assert fa_py.compiled_name("1.0.9") == "flash_attn_cuda"


def test_fa_needs_skips_outside_the_span(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(_tree(tmp_path, "2.5.9.post1")))
    assert fa_py.needs(_ctx(), low="2.0.0", below="2.6.0") == "2.5.9.post1"
    with pytest.raises(Skip, match=r"needs flash-attn >=2.6.0: softcap \(this is 2.5.9.post1\)"):
        fa_py.needs(_ctx(), low="2.6.0", why="softcap")
    with pytest.raises(Skip, match="<2.0.0"):
        fa_py.needs(_ctx(), below="2.0.0")


def test_torch_pin_reads_the_exact_pin_only():
    assert xf.torch_pin(["numpy", "torch==2.5.1"]) == "2.5.1"
    assert xf.torch_pin(["torch>=2.7"]) is None
    assert xf.torch_pin(["torch==2.2.0; extra == 'dev'"]) is None
    assert xf.torch_pin(None) is None


# ---------------------------------------------------------------- torch extension build log
torch_ext = import_module("verification.cases._torch_ext")
_venv = import_module("verification.cases._venv")

BUILD_LOG = """[1/1] c++ -c broken.cpp -o broken.o
FAILED: /tmp/x/build/broken.o
c++ -c broken.cpp
broken.cpp:1:31: error: 'value_that_is_not_declared' was not declared in this scope
ninja: build stopped: subcommand failed.
subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.
RuntimeError: Error compiling objects for extension
"""


def test_a_wrapper_line_counts_only_where_a_failed_build_prints_it():
    ctx = _ctx()
    lines = torch_ext.lines_in_order(ctx, _venv.Run([], 1, BUILD_LOG), "RuntimeError")
    assert lines == BUILD_LOG.splitlines()
    order = (torch_ext.FAILED, torch_ext.COMPILER_ERROR, torch_ext.NINJA_STOPPED, torch_ext.NINJA_CALLED)
    torch_ext.lines_in_order(ctx, _venv.Run([], 1, BUILD_LOG), "ninja's line", order)
    # torch's exception printed before the step that failed: not the log of a failed build
    moved = BUILD_LOG.replace("RuntimeError: Error compiling objects for extension\n", "")
    moved = "RuntimeError: Error compiling objects for extension\n" + moved
    with pytest.raises(Refuted):
        torch_ext.lines_in_order(_ctx(), _venv.Run([], 1, moved), "RuntimeError")
    # no record line at all is left to the step's expect_error
    torch_ext.lines_in_order(_ctx(), _venv.Run([], 1, "FAILED: x.o\n"), "RuntimeError")
