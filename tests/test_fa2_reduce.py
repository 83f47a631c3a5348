"""The reduced FA2 build recipe on the CPU (verification/device/fa2_reduce.py): on a tiny tree shaped
like flash-attn 2.8.3's sources (the template declarations of src/flash.h, the type and head-dim
switches of src/static_switch.h, the dispatch of flash_api.cpp, one file per kernel specialization,
setup.py's source list), the generated stub defines every dispatched specialization that is not
compiled and none that is, the stubs compile and throw the message the cases skip on, and sources
of another shape are refused with a clear error."""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DEVICE = Path(__file__).resolve().parent.parent / "verification" / "device"
sys.path.insert(0, str(DEVICE))
import fa2_reduce  # noqa: E402
from fa2_reduce import Spec  # noqa: E402

DTYPES = {"fp16": "cutlass::half_t", "bf16": "cutlass::bfloat16_t"}
DIMS = (64, 128)
# template name -> (kernel file prefix, parameter type), as in 2.8.3
TEMPLATES = {"run_mha_fwd_": ("flash_fwd_", "Flash_fwd_params"),
             "run_mha_fwd_splitkv_dispatch": ("flash_fwd_split_", "Flash_fwd_params"),
             "run_mha_bwd_": ("flash_bwd_", "Flash_bwd_params")}

FLASH_H = """#pragma once
#include "namespace_config.h"
typedef struct CUstream_st *cudaStream_t;
namespace FLASH_NAMESPACE {
struct Flash_fwd_params { int d; };
struct Flash_bwd_params : public Flash_fwd_params {};
template<typename T, int Headdim, bool Is_causal> void run_mha_fwd_(Flash_fwd_params &params, cudaStream_t stream);
template<typename T, int Headdim, bool Is_causal> void run_mha_fwd_splitkv_dispatch(Flash_fwd_params &params, cudaStream_t stream);

template<typename T, int Headdim, bool Is_causal> void run_mha_bwd_(Flash_bwd_params &params, cudaStream_t stream);
}
"""
NAMESPACE_H = "#pragma once\n#define FLASH_NAMESPACE flash\n"
SWITCH_H = "\n".join([f"  using elem_type = {t};" for t in DTYPES.values()]
                     + [f"  constexpr static int kHeadDim = {d};" for d in DIMS]) + "\n"
API = "\n".join(f"    {name}<elem_type, kHeadDim, Is_causal>(params, stream);" for name in TEMPLATES) + "\n"


def kernel_file(name: str, dtype: str, dim: int, causal: bool) -> tuple[str, str]:
    prefix, ptype = TEMPLATES[name]
    fname = f"{prefix}hdim{dim}_{dtype}{'_causal' if causal else ''}_sm80.cu"
    spec = f"{name}<{DTYPES[dtype]}, {dim}, {str(causal).lower()}>({ptype} &params, cudaStream_t stream)"
    body = f"template void {spec};\n" if "split" in name else f"template<>\nvoid {spec} {{\n}}\n"
    return fname, '#include "flash.h"\nnamespace FLASH_NAMESPACE {\n' + body + "}\n"


@pytest.fixture
def tree(tmp_path):
    src = tmp_path / "csrc" / "flash_attn"
    (src / "src").mkdir(parents=True)
    (src / "src" / "flash.h").write_text(FLASH_H)
    # as upstream: flash.h names cutlass's element types without declaring them (cutlass's own
    # header does, under csrc/cutlass/include); a stub file must include it itself
    cutlass = tmp_path / "csrc" / "cutlass" / "include" / "cutlass"
    cutlass.mkdir(parents=True)
    (cutlass / "numeric_types.h").write_text("#pragma once\nnamespace cutlass { struct half_t {}; struct bfloat16_t {}; }\n")
    (src / "src" / "namespace_config.h").write_text(NAMESPACE_H)
    (src / "src" / "static_switch.h").write_text(SWITCH_H)
    (src / "flash_api.cpp").write_text(API)
    names = []
    for name, dtype, dim, causal in itertools.product(TEMPLATES, DTYPES, DIMS, (False, True)):
        fname, text = kernel_file(name, dtype, dim, causal)
        (src / "src" / fname).write_text(text)
        names.append(fname)
    sources = "".join(f'        "csrc/flash_attn/src/{n}",\n' for n in names)
    (tmp_path / "setup.py").write_text(
        "from wheel.bdist_wheel import bdist_wheel as _bdist_wheel\n"
        f'ext(sources=[\n        "csrc/flash_attn/flash_api.cpp",\n{sources}    ])\n')
    return tmp_path


def stubbed(root: Path) -> set[Spec]:
    text = (root / "csrc/flash_attn/src" / fa2_reduce.STUB).read_text()
    return {fa2_reduce.specialization_in(m) for m in re.findall(r"template<> void .*?\n", text)}


def test_the_stub_defines_each_dispatched_specialization_that_is_not_compiled(tree):
    compiled = fa2_reduce.reduce(tree)
    kept = {f"flash_fwd_hdim128_{t}{c}_sm80.cu" for t in DTYPES for c in ("", "_causal")}
    kept |= {n.replace("fwd_", "fwd_split_") for n in kept}
    assert set(compiled) == kept | {fa2_reduce.STUB}
    every = {Spec(n, DTYPES[t], d, c) for n, t, d, c in itertools.product(TEMPLATES, DTYPES, DIMS, (False, True))}
    built = {Spec(n, DTYPES[t], 128, c) for n in ("run_mha_fwd_", "run_mha_fwd_splitkv_dispatch")
             for t in DTYPES for c in (False, True)}
    assert stubbed(tree) == every - built and len(every - built) == 16
    stub = (tree / "csrc/flash_attn/src" / fa2_reduce.STUB).read_text()
    assert stub.count("throw std::runtime_error(\"errkb reduced FA2 build: no ") == 16
    assert "no backward kernel for bf16 head dim 128 causal in this build" in stub
    assert "(Flash_bwd_params &params" in stub and "<cutlass::half_t, 64, false>(Flash_fwd_params &params" in stub

    listed = re.findall(r'"csrc/flash_attn/(.*?)"', (tree / "setup.py").read_text())
    assert listed == ["flash_api.cpp", f"src/{fa2_reduce.STUB}"] + [n for n in listed[2:] if n[4:] in kept]
    assert len(listed) == 2 + len(kept)
    assert "except ImportError" in (tree / "setup.py").read_text()


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler")
def test_the_stubs_compile_and_throw_the_message_the_cases_skip_on(tree, tmp_path):
    fa2_reduce.reduce(tree)
    src = tree / "csrc/flash_attn/src"
    (src / "main.cpp").write_text(
        '#include <cstdio>\n#include <stdexcept>\n#include <cutlass/numeric_types.h>\n#include "flash.h"\nint main() {\n'
        "  flash::Flash_bwd_params p{};\n  try { flash::run_mha_bwd_<cutlass::half_t, 64, true>(p, nullptr); }\n"
        '  catch (const std::runtime_error &e) { std::puts(e.what()); return 0; }\n  return 1;\n}\n')
    exe = tmp_path / "stub_check"
    include = tree / "csrc" / "cutlass" / "include"
    subprocess.run(["g++", "-std=c++17", "-I", str(include), "-x", "c++", str(src / fa2_reduce.STUB),
                    str(src / "main.cpp"), "-o", str(exe)], check=True, cwd=src, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "errkb reduced FA2 build: no backward kernel for fp16 head dim 64 causal in this build"


def test_a_template_the_dispatch_never_calls_gets_no_stub(tree):
    (tree / "csrc/flash_attn/flash_api.cpp").write_text(API.replace("run_mha_bwd_<", "other<"))
    for cu in (tree / "csrc/flash_attn/src").glob("flash_bwd_*.cu"):
        cu.unlink()
    fa2_reduce.reduce(tree)
    assert stubbed(tree) and all(s.template != "run_mha_bwd_" for s in stubbed(tree))


@pytest.mark.parametrize("damage, message", [
    (lambda t: (t / "csrc/flash_attn/src/flash_bwd_hdim64_bf16_sm80.cu").unlink(), "kernel files and dispatch differ"),
    (lambda t: (t / "csrc/flash_attn/src/flash_fwd_hdim128_bf16_sm80.cu").write_text("// empty\n"),
     "flash_fwd_hdim128_bf16_sm80.cu: expected one kernel specialization, found 0"),
    (lambda t: (t / "setup.py").write_text("ext(sources=[])\n"), "setup.py: flash_api.cpp listed 0 times"),
    (lambda t: (t / "csrc/flash_attn/src/static_switch.h").unlink(), "cannot read"),
])
def test_sources_of_another_shape_are_refused_with_a_clear_error(tree, damage, message, capsys):
    damage(tree)
    assert fa2_reduce.main([str(tree)]) == 3
    assert message in capsys.readouterr().err
