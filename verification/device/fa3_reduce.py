"""Runs ON the lent GPU (from fa3-build.sh): turn the unpacked FA3 sources (fa3_src.py's archive:
flash-attention v2.8.3's hopper/ with cutlass's headers) into the reduced errkb FA3 build, in place.

    python3 verification/device/fa3_reduce.py SRC_ROOT   # prints the compiled files
    python3 verification/device/fa3_reduce.py --env      # prints the switches, NAME=TRUE ...

The kernel set is cut in two ways. First by upstream's own switches (SWITCHES: hopper/setup.py's
FLASH_ATTENTION_DISABLE_<X> variables, which define FLASHATTENTION_DISABLE_<...> for every file):
no split-KV, paged KV, append-KV, softcap, pack-GQA, fp16, clusters, head dims 64/96/256 or sm8x
kernels; a call that needs one of those raises upstream's "This flash attention build does not
support ..." in flash_api.cpp. Then, of what flash_api.cpp still dispatches to under those switches
(read from its source, with its #ifdef/#ifndef blocks evaluated for them), only the KEEP files are
compiled: head dims 128 and 192 (V 128) forward for bf16 and fp8 e4m3, and the bf16 backward for
head dim 128. One stub translation unit (STUB) defines the rest (192/192 forward, 192 backward) as
functions that throw "errkb reduced FA3 build: no ... kernel"; the flash-attn cases skip on both
texts (cases/flash-attn/_fa.py). The host code, where every argument check lives, is upstream's.

setup.py is patched in four places, each anchored on its exact v2.8.3 text: the source list is cut
to flash_api.cpp, flash_prepare_scheduler.cu, the kept files and the stub; a CUDA 13 nvcc is used
as is instead of downloading nvcc 12.6/ptxas 12.8 (upstream's own fix after 2.8.3, 933b2c3, #1949;
its CCCL include path is set by fa3-build.sh); the `git submodule update` call is dropped (the
cutlass headers come in the archive; the machine may have no git); and bdist_wheel is imported from
setuptools when the wheel package no longer has it. Standard library only.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import NamedTuple

# hopper/setup.py's FLASH_ATTENTION_DISABLE_<X> variables this build sets to TRUE
SWITCHES = ("SPLIT", "PAGEDKV", "APPENDKV", "SOFTCAP", "PACKGQA", "FP16", "CLUSTER",
            "HDIM64", "HDIM96", "HDIM256", "SM80")
KEEP = ("flash_fwd_hdim128_bf16_sm90.cu", "flash_fwd_hdim192_128_bf16_sm90.cu",
        "flash_fwd_hdim128_e4m3_sm90.cu", "flash_fwd_hdim192_128_e4m3_sm90.cu",
        "flash_bwd_hdim128_bf16_sm90.cu")
STUB = "errkb_reduced_stubs.cpp"
MARK = "errkb reduced FA3 build"
# flash_api.cpp's template parameters that the switches fix: name -> (macro that must be defined, value)
FIXED = {"Arch": ("FLASHATTENTION_DISABLE_SM8x", "90"), "Split": ("FLASHATTENTION_DISABLE_SPLIT", "false"),
         "PagedKVNonTMA": ("FLASHATTENTION_DISABLE_PAGEDKV", "false"),
         "Has_softcap": ("FLASHATTENTION_DISABLE_SOFTCAP", "false"),
         "PackGQA": ("FLASHATTENTION_DISABLE_PACKGQA", "false")}
DTYPE = {"cutlass::bfloat16_t": "bf16", "cutlass::half_t": "fp16", "cutlass::float_e4m3_t": "fp8 e4m3"}
TEMPLATES = ("run_mha_fwd_", "run_mha_bwd_")
PARAMS = {"run_mha_fwd_": "Flash_fwd_params", "run_mha_bwd_": "Flash_bwd_params"}

SETUP_ENV = re.compile(r'^(\w+)\s*=\s*os\.getenv\("FLASH_ATTENTION_DISABLE_(\w+)",\s*"FALSE"\)\s*==\s*"TRUE"', re.M)
SETUP_MACRO = re.compile(r'\["-D(FLASHATTENTION_DISABLE_\w+)"\]\s*if\s+(\w+)\s+else')
CALL = re.compile(r"\b(run_mha_fwd_|run_mha_bwd_)\s*<([^<>;]*)>\s*\(")
DEFINITION = re.compile(r"\btemplate\s*(?:<\s*>)?\s*void\s+(run_mha_fwd_|run_mha_bwd_)\s*<([^<>;]*)>\s*\(")
GUARD = re.compile(r"^\s*#\s*ifndef\s+(FLASHATTENTION_DISABLE_\w+)", re.M)
DIRECTIVE = re.compile(r"^\s*#\s*(ifdef|ifndef|if|elif|else|endif)\b\s*(\S*)")

SOURCES_ANCHOR = '    sources += ["flash_prepare_scheduler.cu"]\n'
DOWNLOAD_ANCHOR = '    if bare_metal_version != Version("12.8"):\n'
SUBMODULE_ANCHOR = 'subprocess.run(["git", "submodule", "update", "--init", "../csrc/cutlass"])\n'
WHEEL_IMPORT = "from wheel.bdist_wheel import bdist_wheel as _bdist_wheel\n"


class ReduceError(Exception):
    """The sources are not shaped as this recipe expects (another flash-attention version?)."""


class Spec(NamedTuple):
    """One kernel specialization: template name and its template arguments, as written in C++."""

    template: str
    args: tuple[str, ...]

    def describe(self) -> str:
        dtype = DTYPE.get(self.args[1], self.args[1])
        if self.template == "run_mha_fwd_":
            return f"forward kernel for {dtype} head dim {self.args[2]} (V {self.args[3]})"
        return f"backward kernel for {dtype} head dim {self.args[2]}"

    def cpp(self) -> str:
        return f"{self.template}<{', '.join(self.args)}>"


def _args(text: str) -> tuple[str, ...]:
    return tuple(" ".join(a.split()) for a in text.split(","))


def macros(setup: str) -> dict[str, str]:
    """FLASH_ATTENTION_DISABLE_<X> switch -> the FLASHATTENTION_DISABLE_<...> macro setup.py defines for it."""
    var_of = {switch: var for var, switch in SETUP_ENV.findall(setup)}
    macro_of = {var: macro for macro, var in SETUP_MACRO.findall(setup)}
    missing = [s for s in SWITCHES if s not in var_of or var_of[s] not in macro_of]
    if missing:
        raise ReduceError(f"setup.py has no FLASH_ATTENTION_DISABLE_ switch for {missing}")
    return {s: macro_of[var_of[s]] for s in SWITCHES}


def active_text(source: str, defined: set[str]) -> str:
    """source without the lines its #ifdef/#ifndef/#else blocks drop when `defined` macros are set
    (and without // comments); other conditionals are refused rather than guessed."""
    out, stack = [], []  # stack of (this branch taken, enclosing block active)
    for line in source.splitlines():
        match = DIRECTIVE.match(line)
        active = all(taken for taken, _ in stack)
        if match:
            kind, name = match.groups()
            if kind in ("if", "elif"):
                raise ReduceError(f"unsupported preprocessor condition: {line.strip()}")
            if kind in ("ifdef", "ifndef"):
                stack.append(((name in defined) == (kind == "ifdef"), active))
            elif not stack:
                raise ReduceError(f"unbalanced #{kind}")
            elif kind == "else":
                taken, outer = stack.pop()
                stack.append((not taken, outer))
            else:
                stack.pop()
            continue
        if active:
            out.append(line.split("//", 1)[0])
    if stack:
        raise ReduceError("unterminated #ifdef/#ifndef block")
    return "\n".join(out)


def dispatched(api: str, defined: set[str]) -> set[Spec]:
    """Every kernel specialization flash_api.cpp calls under the switches, with the switch-fixed
    template parameters (Arch, Split, ...) replaced by their only value."""
    found = set()
    for name, raw in CALL.findall(active_text(api, defined)):
        args = []
        for arg in _args(raw):
            if re.fullmatch(r"[A-Za-z_]\w*", arg) and arg not in ("true", "false"):
                if arg not in FIXED or FIXED[arg][0] not in defined:
                    raise ReduceError(f"{name}<{raw}>: {arg} is not fixed by this build's switches")
                arg = FIXED[arg][1]
            args.append(arg)
        found.add(Spec(name, tuple(args)))
    if not {s.template for s in found} >= set(TEMPLATES):
        raise ReduceError(f"flash_api.cpp: no calls of {TEMPLATES} found")
    return found


def defined_in(text: str, defined: set[str], where: str = "text") -> Spec | None:
    """The one specialization an upstream instantiation file defines, or None if its guard is off."""
    found = DEFINITION.findall(text)
    if len(found) != 1:
        raise ReduceError(f"{where}: expected one kernel specialization, found {len(found)}")
    guards = GUARD.findall(text)
    if any(guard in defined for guard in guards):
        return None
    return Spec(found[0][0], _args(found[0][1]))


def upstream_kernels(hopper: Path, defined: set[str]) -> dict[Spec, str]:
    """specialization -> the single-kernel sm90 file of instantiations/ that defines it (the
    hdimall/hdimdiff files only #include those)."""
    out: dict[Spec, str] = {}
    for cu in sorted((hopper / "instantiations").glob("flash_*_sm90.cu")):
        text = _read(cu)
        if re.search(r'#include\s+"flash_(fwd|bwd)_hdim', text):
            continue
        spec = defined_in(text, defined, cu.name)
        if spec is not None:
            if spec in out:
                raise ReduceError(f"{spec.cpp()} defined by both {out[spec]} and {cu.name}")
            out[spec] = cu.name
    return out


def stub_source(missing: set[Spec]) -> str:
    """C++ defining each missing specialization as a function that throws a RuntimeError."""
    lines = ["// Generated by errkb's verification/device/fa3_reduce.py: kernels this reduced build lacks.",
             "#include <stdexcept>", "#include <cutlass/numeric_types.h>", '#include "flash.h"', ""]
    for spec in sorted(missing):
        lines += [f"template<> void {spec.cpp()}({PARAMS[spec.template]} &params, cudaStream_t stream) {{",
                  f'    throw std::runtime_error("{MARK}: no {spec.describe()} in this build");', "}", ""]
    return "\n".join(lines)


def patch_setup(text: str, keep: list[str]) -> str:
    """setup.py compiling flash_api.cpp, the scheduler, `keep` and the stub with the machine's nvcc."""
    listed = ", ".join(f'"instantiations/{name}"' for name in keep)
    edits = [
        (SOURCES_ANCHOR, SOURCES_ANCHOR + "    # errkb reduced build: upstream's kernel files replaced by these (fa3_reduce.py)\n"
         f'    sources = [s for s in sources if not s.startswith("instantiations/")] + [{listed}, "{STUB}"]\n'),
        (DOWNLOAD_ANCHOR, '    if bare_metal_version < Version("13.0") and bare_metal_version != Version("12.8"):'
         "  # errkb: CUDA 13 builds with its own nvcc (upstream 933b2c3, #1949)\n"),
        (SUBMODULE_ANCHOR, "# errkb: no `git submodule update`; the cutlass headers come with the sources\n"),
        (WHEEL_IMPORT, "try:\n    " + WHEEL_IMPORT + "except ImportError:\n"
         "    from setuptools.command.bdist_wheel import bdist_wheel as _bdist_wheel\n"),
    ]
    for anchor, replacement in edits:
        if text.count(anchor) != 1:
            raise ReduceError(f"setup.py: expected this line once, found it {text.count(anchor)} times: {anchor.strip()}")
        text = text.replace(anchor, replacement)
    return text


def reduce(root: Path) -> list[str]:
    """Write the stub and patch setup.py under the source root; return the compiled file names."""
    hopper = root / "hopper"
    setup = hopper / "setup.py"
    setup_text = _read(setup)
    defined = set(macros(setup_text).values())
    want = dispatched(_read(hopper / "flash_api.cpp"), defined)
    upstream = upstream_kernels(hopper, defined)
    if not want <= set(upstream):
        raise ReduceError(f"dispatched but in no upstream kernel file: {sorted(s.cpp() for s in want - set(upstream))}")
    compiled = {spec for spec, name in upstream.items() if name in KEEP}
    kept = sorted(upstream[spec] for spec in compiled)
    if kept != sorted(KEEP) or not compiled <= want:
        raise ReduceError(f"kept files missing, guarded off or not dispatched: {sorted(set(KEEP) - set(kept))}")
    (hopper / STUB).write_text(stub_source(want - compiled))
    setup.write_text(patch_setup(setup_text, kept))
    return ["flash_api.cpp", "flash_prepare_scheduler.cu", *kept, STUB]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReduceError(f"cannot read {path}: {exc.strerror}") from None


def main(argv: list[str]) -> int:
    if argv == ["--env"]:
        print(" ".join(f"FLASH_ATTENTION_DISABLE_{s}=TRUE" for s in SWITCHES))
        return 0
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    try:
        compiled = reduce(Path(argv[0]))
    except ReduceError as exc:
        print(f"fa3_reduce.py: {exc}", file=sys.stderr)
        return 3
    print("\n".join(compiled))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
