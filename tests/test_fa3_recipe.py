"""The reduced FA3 build recipe on the CPU (verification/device/fa3_reduce.py, fa3_src.py,
flash-attn-install.sh): on a tiny tree shaped like flash-attention v2.8.3's hopper/ (setup.py's
switches and the lines the recipe patches, flash_api.cpp's #ifdef-guarded dispatch, one file per
kernel specialization plus the hdimall files that #include them), the stub defines exactly the
dispatched specializations that are not compiled, compiles and throws the message the cases skip on;
sources of another shape are refused; the source archive is the same bytes every time; and the install
step puts FA2 and FA3 side by side."""

from __future__ import annotations

import io
import lzma
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEVICE = ROOT / "verification" / "device"
sys.path.insert(0, str(DEVICE))
import fa3_reduce  # noqa: E402
import fa3_src  # noqa: E402
from fa3_reduce import Spec  # noqa: E402

BF16, E4M3 = "cutlass::bfloat16_t", "cutlass::float_e4m3_t"
FLAGS = ("SPLIT", "PAGEDKV", "APPENDKV", "SOFTCAP", "PACKGQA", "FP16", "CLUSTER", "HDIM64", "HDIM96", "HDIM128",
         "HDIM192", "HDIM256")

FLASH_H = """#pragma once
typedef struct CUstream_st *cudaStream_t;
struct Flash_fwd_params { int d; };
struct Flash_bwd_params : public Flash_fwd_params {};
template <int Arch, typename T, int kHeadDim, int kHeadDimV, bool Split, bool PagedKVNonTMA, bool Has_softcap, bool PackGQA>
void run_mha_fwd_(Flash_fwd_params &params, cudaStream_t stream);
template <int Arch, typename T, int kHeadDim, bool Has_softcap>
void run_mha_bwd_(Flash_bwd_params &params, cudaStream_t stream);
"""
FWD = "run_mha_fwd_<{arch}, {t}, {d}, {dv}, Split, PagedKVNonTMA, Has_softcap, PackGQA>(params, stream);"
API = "\n".join([
    "template <int Arch, int Split, bool PagedKVNonTMA, bool PackGQA, bool Has_softcap>",
    "void run_mha_fwd_constexpr(Flash_fwd_params &params, cudaStream_t stream) {",
    "    #ifndef FLASHATTENTION_DISABLE_FP16",
    "    " + FWD.format(arch="Arch", t="cutlass::half_t", d=128, dv=128),
    "    #else",
    '    TORCH_CHECK(false, "This flash attention build does not support FP16.");',
    "    #endif",
    "    #ifndef FLASHATTENTION_DISABLE_HDIM64",
    "    " + FWD.format(arch="Arch", t=BF16, d=64, dv=64),
    "    #endif",
    "    #ifndef FLASHATTENTION_DISABLE_HDIM128",
    "    " + FWD.format(arch="Arch", t=BF16, d=128, dv=128),
    "    " + FWD.format(arch=90, t=E4M3, d=128, dv=128),
    "    #endif",
    "    #ifndef FLASHATTENTION_DISABLE_HDIM192",
    "    " + FWD.format(arch="Arch", t=BF16, d=192, dv=128),
    "    " + FWD.format(arch="Arch", t=BF16, d=192, dv=192),
    "    " + FWD.format(arch=90, t=E4M3, d=192, dv=128),
    "    " + FWD.format(arch=90, t=E4M3, d=192, dv=192),
    "    #endif",
    "    // run_mha_fwd_<cutlass::half_t, kHeadSize>(params, stream);",
    "}",
    "#ifdef FLASHATTENTION_DISABLE_BACKWARD",
    "void run_mha_bwd(Flash_bwd_params &params, cudaStream_t stream) {}",
    "#else",
    "template <int Arch, bool Has_softcap>",
    "void run_mha_bwd_constexpr(Flash_bwd_params &params, cudaStream_t stream) {",
    "    #ifndef FLASHATTENTION_DISABLE_HDIM128",
    "    run_mha_bwd_<Arch, cutlass::bfloat16_t, 128, Has_softcap>(params, stream);",
    "    #endif",
    "    #ifndef FLASHATTENTION_DISABLE_HDIM192",
    "    run_mha_bwd_<Arch, cutlass::bfloat16_t, 192, Has_softcap>(params, stream);",
    "    #endif",
    "}",
    "#endif",
]) + "\n"
SETUP = "\n".join(
    ["import os", "from wheel.bdist_wheel import bdist_wheel as _bdist_wheel"]
    + [f'DISABLE_{f} = os.getenv("FLASH_ATTENTION_DISABLE_{f}", "FALSE") == "TRUE"' for f in FLAGS]
    + ['DISABLE_SM8x = os.getenv("FLASH_ATTENTION_DISABLE_SM80", "FALSE") == "TRUE"',
       'subprocess.run(["git", "submodule", "update", "--init", "../csrc/cutlass"])',
       "if True:",
       '    if bare_metal_version != Version("12.8"):',
       "        download()",
       "    feature_args = ("]
    + [f'        + (["-DFLASHATTENTION_DISABLE_{f}"] if DISABLE_{f} else [])' for f in FLAGS]
    + ['        + (["-DFLASHATTENTION_DISABLE_SM8x"] if DISABLE_SM8x else [])', "    )",
       '    sources = ["flash_api.cpp", "instantiations/flash_fwd_hdimall_bf16_sm90.cu"]',
       '    sources += ["flash_prepare_scheduler.cu"]']) + "\n"


def fwd_file(t: str, d: int, dv: int, variant: str = "", split: str = "false") -> tuple[str, str]:
    tag = {BF16: "bf16", E4M3: "e4m3"}[t]
    dims = f"{d}" if d == dv else f"{d}_{dv}"
    guard = {64: "HDIM64", 128: "HDIM128", 192: "HDIM192"}[d]
    body = (f'#include "flash_fwd_launch_template.h"\n\n#ifndef FLASHATTENTION_DISABLE_{guard}\n'
            f"template void run_mha_fwd_<90, {t}, {d}, {dv}, {split}, false, false, false>"
            "(Flash_fwd_params &params, cudaStream_t stream);\n#endif\n")
    return f"flash_fwd_hdim{dims}_{tag}{variant}_sm90.cu", body


def bwd_file(d: int) -> tuple[str, str]:
    body = (f'#include "flash_bwd_launch_template.h"\n\n#ifndef FLASHATTENTION_DISABLE_HDIM{d}\n'
            f"template<>\nvoid run_mha_bwd_<90, cutlass::bfloat16_t, {d}, false>(Flash_bwd_params &params, "
            f"cudaStream_t stream) {{\n    run_mha_bwd_hdim{d}<90, cutlass::bfloat16_t, false>(params, stream);\n}}\n#endif\n")
    return f"flash_bwd_hdim{d}_bf16_sm90.cu", body


@pytest.fixture
def tree(tmp_path):
    hopper = tmp_path / "hopper"
    inst = hopper / "instantiations"
    inst.mkdir(parents=True)
    (hopper / "flash.h").write_text(FLASH_H)
    (hopper / "flash_api.cpp").write_text(API)
    (hopper / "setup.py").write_text(SETUP)
    cutlass = tmp_path / "csrc" / "cutlass" / "include" / "cutlass"
    cutlass.mkdir(parents=True)
    (cutlass / "numeric_types.h").write_text(
        "#pragma once\nnamespace cutlass { struct half_t {}; struct bfloat16_t {}; struct float_e4m3_t {}; }\n")
    files = [fwd_file(t, d, dv) for t in (BF16, E4M3) for d, dv in ((64, 64), (128, 128), (192, 128), (192, 192))]
    files += [fwd_file(BF16, 128, 128, "_split", split="true"), bwd_file(128), bwd_file(192)]
    for name, text in files:
        (inst / name).write_text(text)
    (inst / "flash_fwd_hdimall_bf16_sm90.cu").write_text(
        '#include "flash_fwd_hdim64_bf16_sm90.cu"\n#include "flash_fwd_hdim128_bf16_sm90.cu"\n')
    return tmp_path


def stubbed(root: Path) -> set[str]:
    return set(re.findall(r"template<> void (run_mha_\w+<[^>]*>)", (root / "hopper" / fa3_reduce.STUB).read_text()))


def test_the_stub_defines_each_dispatched_specialization_that_is_not_compiled(tree):
    compiled = fa3_reduce.reduce(tree)
    assert compiled == ["flash_api.cpp", "flash_prepare_scheduler.cu", *sorted(fa3_reduce.KEEP), fa3_reduce.STUB]
    assert stubbed(tree) == {f"run_mha_fwd_<90, {BF16}, 192, 192, false, false, false, false>",
                             f"run_mha_fwd_<90, {E4M3}, 192, 192, false, false, false, false>",
                             "run_mha_bwd_<90, cutlass::bfloat16_t, 192, false>"}
    stub = (tree / "hopper" / fa3_reduce.STUB).read_text()
    assert 'throw std::runtime_error("errkb reduced FA3 build: no backward kernel for bf16 head dim 192 in this build")' in stub
    assert "no forward kernel for fp8 e4m3 head dim 192 (V 192) in this build" in stub
    setup = (tree / "hopper" / "setup.py").read_text()
    kept = re.search(r'sources = \[s for s in sources if not s.startswith\("instantiations/"\)\] \+ \[(.*)\]', setup)
    assert kept and re.findall(r'"([^"]+)"', kept.group(1)) == [f"instantiations/{n}" for n in sorted(fa3_reduce.KEEP)] + [fa3_reduce.STUB]
    assert 'if bare_metal_version < Version("13.0") and bare_metal_version != Version("12.8"):' in setup
    assert 'subprocess.run(["git"' not in setup and "except ImportError" in setup


def test_the_dispatch_follows_the_switches_not_the_text(tree):
    defined = set(fa3_reduce.macros((tree / "hopper" / "setup.py").read_text()).values())
    assert "FLASHATTENTION_DISABLE_SM8x" in defined and "FLASHATTENTION_DISABLE_HDIM128" not in defined
    found = fa3_reduce.dispatched(API, defined)
    # hdim 64 and fp16 are switched off; the #else of FP16 and the // comment add nothing; Arch is 90
    assert {s.args[2] for s in found} == {"128", "192"}
    assert all(s.args[0] == "90" and "cutlass::half_t" not in s.args for s in found)
    assert Spec("run_mha_bwd_", ("90", BF16, "192", "false")) in found and len(found) == 8
    with pytest.raises(fa3_reduce.ReduceError, match="PackGQA is not fixed"):
        fa3_reduce.dispatched(API, defined - {"FLASHATTENTION_DISABLE_PACKGQA"})


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler")
def test_the_stubs_compile_and_throw_the_message_the_cases_skip_on(tree, tmp_path):
    fa3_reduce.reduce(tree)
    hopper = tree / "hopper"
    (hopper / "main.cpp").write_text(
        '#include <cstdio>\n#include <stdexcept>\n#include <cutlass/numeric_types.h>\n#include "flash.h"\nint main() {\n'
        "  Flash_fwd_params p{};\n  try { run_mha_fwd_<90, cutlass::float_e4m3_t, 192, 192, false, false, false, false>(p, nullptr); }\n"
        '  catch (const std::runtime_error &e) { std::puts(e.what()); return 0; }\n  return 1;\n}\n')
    exe = tmp_path / "stub_check"
    include = tree / "csrc" / "cutlass" / "include"
    subprocess.run(["g++", "-std=c++17", "-I", str(include), "-I", str(hopper), str(hopper / fa3_reduce.STUB),
                    str(hopper / "main.cpp"), "-o", str(exe)], check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "errkb reduced FA3 build: no forward kernel for fp8 e4m3 head dim 192 (V 192) in this build"


@pytest.mark.parametrize("damage, message", [
    (lambda h: (h / "instantiations/flash_bwd_hdim192_bf16_sm90.cu").unlink(), "dispatched but in no upstream kernel file"),
    (lambda h: (h / "instantiations/flash_fwd_hdim128_e4m3_sm90.cu").write_text("// empty\n"),
     "flash_fwd_hdim128_e4m3_sm90.cu: expected one kernel specialization, found 0"),
    (lambda h: (h / "setup.py").write_text(SETUP.replace('    sources += ["flash_prepare_scheduler.cu"]\n', "")),
     "expected this line once, found it 0 times"),
    (lambda h: (h / "setup.py").write_text(SETUP.replace("FLASH_ATTENTION_DISABLE_CLUSTER", "OTHER")),
     "no FLASH_ATTENTION_DISABLE_ switch for ['CLUSTER']"),
    (lambda h: (h / "flash_api.cpp").write_text("#if defined(X)\n" + API + "#endif\n"), "unsupported preprocessor condition"),
    (lambda h: (h / "flash_api.cpp").write_text(API.replace("#endif\n", "", 1)), "unterminated"),
    (lambda h: (h / "flash.h").unlink() or (h / "flash_api.cpp").unlink(), "cannot read"),
])
def test_sources_of_another_shape_are_refused_with_a_clear_error(tree, damage, message, capsys):
    damage(tree / "hopper")
    assert fa3_reduce.main([str(tree)]) == 3
    assert message in capsys.readouterr().err


def test_the_switches_are_printed_for_the_build_and_match_the_build_line(capsys):
    assert fa3_reduce.main(["--env"]) == 0
    words = capsys.readouterr().out.split()
    assert words == [f"FLASH_ATTENTION_DISABLE_{s}=TRUE" for s in fa3_reduce.SWITCHES]
    build = (DEVICE / "fa3-build.sh").read_text()
    line = re.search(r'echo "(flash-attn-3=.*)" > "\$OUT/fa3/BUILD"', build).group(1)
    assert "," not in line  # ERRKB_VERIFY_LIBS splits on commas
    named = line.split("FLASHATTENTION_DISABLE_ ")[1].rstrip(")").split()
    assert named == [s if s != "SM80" else "SM8x" for s in fa3_reduce.SWITCHES]


def test_the_build_script_and_the_packer_pin_the_same_archive():
    build = (DEVICE / "fa3-build.sh").read_text()
    assert f"ARCHIVE_SHA256={fa3_src.ARCHIVE_SHA256} " in build
    assert f"ARCHIVE={fa3_src.ARCHIVE}\n" in build


def test_the_archive_is_the_same_bytes_whatever_order_the_files_come_in():
    files = {"top/b.h": (0o644, b"b"), "top/a/x.sh": (0o755, b"#!/bin/sh\n")}
    one = fa3_src.archive_bytes(files, 1_700_000_000)
    assert one == fa3_src.archive_bytes(dict(reversed(list(files.items()))), 1_700_000_000)
    with tarfile.open(fileobj=io.BytesIO(lzma.decompress(one))) as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == ["top/a/x.sh", "top/b.h"]
        assert [(m.mode, m.uid, m.uname, m.mtime) for m in members] == [(0o755, 0, "", 1_700_000_000), (0o644, 0, "", 1_700_000_000)]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_sources_are_taken_only_from_the_pinned_trees(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "fa"
    (repo / "hopper").mkdir(parents=True)
    (repo / "hopper" / "setup.py").write_text("print()\n")
    (repo / "README.md").write_text("readme\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    commit = fa3_src.git(repo, "rev-parse", "HEAD")
    trees = {p: fa3_src.git(repo, "rev-parse", f"HEAD:{p}") for p in ("hopper", "README.md")}
    monkeypatch.setattr(fa3_src, "FA_COMMIT", commit)
    monkeypatch.setattr(fa3_src, "FA_PATHS", trees)
    files = fa3_src.members(repo, commit, sorted(trees), "top/")
    assert files == {"top/README.md": (0o644, b"readme\n"), "top/hopper/setup.py": (0o644, b"print()\n")}
    # the real pins name other trees (and a csrc/cutlass this repository lacks): refused, nothing written
    monkeypatch.setattr(fa3_src, "FA_PATHS", {"hopper": "0" * 40})
    out = tmp_path / "out.tar.xz"
    assert fa3_src.main(["--flash-attention", str(repo), "--cutlass", str(repo), "--out", str(out)]) == 3
    assert "pinned 0000" in capsys.readouterr().err and not out.exists()


@pytest.mark.skipif(shutil.which("xz") is None, reason="needs xz for tar -J")
def test_the_install_step_puts_fa2_and_fa3_side_by_side(tmp_path):
    for folder, archive, module, line in (("fa", "fa.tar.xz", "flash_attn.py", "flash-attn=2.8.3 (a; b)"),
                                          ("fa3", "fa3.tar.xz", "flash_attn_interface.py", "flash-attn-3=v2.8.3 (c)")):
        (tmp_path / ".gpu" / folder).mkdir(parents=True)
        (tmp_path / module).write_text("x = 1\n")
        subprocess.run(["tar", "-cJf", f".gpu/{folder}/{archive}", module], cwd=tmp_path, check=True)
        (tmp_path / ".gpu" / folder / "BUILD").write_text(line + "\n")

    def install():
        script = f'FASITE={tmp_path}/site; source {DEVICE}/flash-attn-install.sh; rc=$?; echo "$rc|$FA_LIBS"; ls $FASITE'
        return subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True)

    done = install()
    assert done.stdout.split("\n")[:3] == ["0|flash-attn=2.8.3 (a; b),flash-attn-3=v2.8.3 (c)", "flash_attn.py",
                                           "flash_attn_interface.py"]
    (tmp_path / ".gpu" / "fa3" / "BUILD").write_text("flash-attn-3=x, y\n")
    done = install()
    assert done.stdout.startswith("3|") and "without commas" in done.stderr
    (tmp_path / ".gpu" / "fa3" / "fa3.tar.xz").unlink()
    assert install().stdout.startswith("3|")
    shutil.rmtree(tmp_path / ".gpu" / "fa3")
    assert install().stdout.split("\n")[:2] == ["0|flash-attn=2.8.3 (a; b)", "flash_attn.py"]


@pytest.mark.skipif(shutil.which("xz") is None, reason="needs xz for tar -J")
def test_an_fa2_build_for_another_arch_gets_a_site_of_its_own(tmp_path):
    for folder, line in (("fa", "flash-attn=2.8.3 (sm90)"), ("fa-sm80", "flash-attn-sm80=2.8.3 (sm80)")):
        (tmp_path / "src" / folder / "flash_attn").mkdir(parents=True)
        (tmp_path / "src" / folder / "flash_attn" / "__init__.py").write_text(f"ARCH = {folder!r}\n")
        (tmp_path / ".gpu" / folder).mkdir(parents=True)
        subprocess.run(["tar", "-cJf", str(tmp_path / ".gpu" / folder / "fa.tar.xz"), "flash_attn"],
                       cwd=tmp_path / "src" / folder, check=True)
        (tmp_path / ".gpu" / folder / "BUILD").write_text(line + "\n")
    script = (f'FASITE={tmp_path}/site; source {DEVICE}/flash-attn-install.sh; echo "$?|$FA_LIBS|$ERRKB_FA2_SM80_SITE"; '
              'cat $FASITE/flash_attn/__init__.py $ERRKB_FA2_SM80_SITE/flash_attn/__init__.py')
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert done.stdout.splitlines() == [f"0|flash-attn=2.8.3 (sm90),flash-attn-sm80=2.8.3 (sm80)|{tmp_path}/site-sm80",
                                        "ARCH = 'fa'", "ARCH = 'fa-sm80'"], done.stderr
