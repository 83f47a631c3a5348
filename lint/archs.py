"""The GPU archs lint rules know, in a module of their own so the CLI can list them without
importing libcst. Volta and Turing (sm70, sm75) are known but not targeted by default: FlashAttention
2/3 refuse them, so a project that runs on T4/V100 says so with --gpu-arch."""

import re
from typing import NamedTuple

ALL_ARCHS = ("sm70", "sm75", "sm80", "sm86", "sm89", "sm90", "sm100", "sm103", "sm110", "sm120", "sm121")
DEFAULT_ARCHS = ("sm80", "sm86", "sm89", "sm90", "sm100", "sm120")

# What shows that a file runs on an accelerator other than NVIDIA's: an AMD ROCm GPU, a Hygon DCU/HCU
# (HIP under Hygon's DTK) or a Baidu Kunlun XPU, where NVIDIA compute capabilities mean nothing.
# Mostly what a file sets or runs to use that platform, read from the held-out rounds' files for
# them: a bare "ROCm" is a mention (CUDA guides
# name it as an alternative), and VLLM_USE_TRITON_FLASH_ATTN, read only on ROCm, is also set in
# CUDA files (the ninth round's A30 Dockerfile and GH200 notes). Each pattern starts with a literal,
# which re finds fast (one alternation of them all scanned 1 MB in 100 ms, these in 15).
NON_NVIDIA_EVIDENCE = tuple(re.compile(p) for p in (
    rb"rocm/(?<![\w./-]rocm/)[a-z]", rb"docker\.io/rocm/",  # AMD's images: rocm/vllm(-dev), rocm/sglang, rocm/pytorch
    rb"lmsysorg/sglang:[\w.-]*rocm",  # SGLang's ROCm tags (v0.4.6.post5-rocm630)
    rb"Dockerfile\.rocm\b",  # vLLM's ROCm image build
    rb"\+rocm\d", rb"/whl/(?:nightly/)?rocm\d",  # ROCm wheels (torch 2.5.1+rocm6.2), PyTorch's ROCm index
    rb"das(?<=[-+.]das)[\d.]", rb"dtk(?<=[-+.]dtk)-?\d", rb"/opt/dtk\b",  # Hygon's builds: vllm 0.23.0+das.dtk2604
    rb"/dev/kfd\b",  # the ROCm driver a container is given
    rb"HIP_VISIBLE_DEVICES\b", rb"ROCR_VISIBLE_DEVICES\b", rb"HSA_OVERRIDE_GFX_VERSION\b", rb"PYTORCH_ROCM_ARCH\b",
    rb"gfx(?:9\d[\da-f]|1[0-2]\d[\da-f])\b",  # AMD GPU archs (gfx90a, gfx942, gfx936, gfx1100)
    rb"rocm(?:-smi|info)\b", rb"amd-smi\b", rb"hipcc\b",
    rb"VLLM_ROCM_\w", rb"ROCM_AITER_\w", rb"ROCM_ATTN\b",  # vLLM's ROCm-only variables and backends
    # Hygon's name for its DCUs in its own scripts ("eight HCU devices"; the twenty-third round), in capitals,
    # also inside a name (VERL_HCU_MODEL_ROOT) or a path (verl-hcu-ci; the twenty-fourth round)
    rb"HCU(?<![A-Za-z0-9]HCU)s?(?![A-Za-z0-9])", rb"hcu(?<=[-_/]hcu)[-_/]",
    # ... and its DCUs the same way (USE_DCU_CUSTOM_ALLREDUCE, /home/dcu_megatron; the twenty-fifth round)
    rb"DCU(?<![A-Za-z0-9]DCU)s?(?![A-Za-z0-9])", rb"dcu(?<=[-_/]dcu)[-_/]",
    # Kunlun's compiler runtime and collective library settings, its device list (the twenty-third round)
    rb"XMLIR_[A-Z]", rb"BKCL_[A-Z]", rb"XPU_VISIBLE_DEVICES\b",
    # the device lists of other vendors' accelerators: Huawei Ascend (the twenty-fourth round's scripts),
    # Moore Threads MUSA, Cambricon MLU, Intel Gaudi
    rb"ASCEND_RT_VISIBLE_DEVICES\b", rb"MUSA_VISIBLE_DEVICES\b", rb"MLU_VISIBLE_DEVICES\b",
    rb"HABANA_VISIBLE_DEVICES\b",
))


def targets_non_nvidia(source: bytes) -> bool:
    """Whether the file shows an AMD ROCm, Hygon DCU/HCU, Kunlun XPU, Ascend, MUSA, MLU or Gaudi target
    anywhere (NON_NVIDIA_EVIDENCE)."""
    return any(p.search(source) for p in NON_NVIDIA_EVIDENCE)


class FileArchs(NamedTuple):
    archs: tuple[str, ...]
    named: bool  # the archs are the GPUs the file names: a finding must hold on each (lint/rule.py)
    assumed: bool = False  # neither the file nor the configuration names a GPU: DEFAULT_ARCHS stand in


# What an arch-dependent finding adds where its archs are assumed: the user should know the finding
# is about GPUs nobody named, and how to name theirs.
ASSUMED_NOTE = "no GPU named in the file or in gpu-archs: judged for the default archs"


def file_archs(source: bytes, archs: tuple[str, ...] | None) -> FileArchs:
    """The NVIDIA archs the arch-dependent rules judge this file for. None in a file that targets
    ROCm or a DCU (the tenth round's DCU guide: CUDA's sm89 refusal reported on a gfx936); else,
    where the file names NVIDIA GPUs, the archs of those it names, `named`: a guide that says it
    runs on two nodes of 8x H200 is judged for sm90, not for the Blackwell archs of the default
    list (the eleventh round's SGLang guide, where fa3 works); else the configured ones.
    A file naming GPUs of several archs is judged for each, and a finding must hold on every one
    of them (the twelfth round's guide puts fa3 on its H100 and another backend on its B200); a
    finding on the configured archs needs only one. A guide with an NVIDIA and an AMD section is
    not judged. The named GPUs override --gpu-arch / gpu-archs too (the CLI keeps no mark of
    whether the archs were set or defaulted, and a file's own statement is more specific than the
    project's list): the configured archs only stand for files that name no GPU. `archs` None: none
    are configured, and DEFAULT_ARCHS stand in, `assumed`."""
    if archs is not None and not archs or targets_non_nvidia(source):
        return FileArchs((), False)
    named = named_archs(source)
    if named:
        return FileArchs(named, True)
    return FileArchs(DEFAULT_ARCHS, False, True) if archs is None else FileArchs(tuple(archs), False)


# NVIDIA GPU names -> the arch they are, for files that say which GPU they run on (file_archs).
# Read from the held-out rounds' files: names appear in prose ("two nodes of 8x H200"), tables,
# counts (8xB200s, 4× NVIDIA L20), image tags and paths (vllm-v100, h100_results.json), so a name
# may follow "_", "-" or a count and take a plural "s", but no letter or digit (A10 is not in
# A100 or Qwen3.5-122B-A10B, H20 is not in H200, B200 is not in GB200 or llama.cpp's b2000).
# Names that are also spreadsheet cells or line anchors (A10, A30, A40, L20, L40) are matched in
# capitals only and not after "#"; L4 and T4 (layer L4, a T4 template) only where the text makes
# them a GPU (NVIDIA L4, Tesla T4, on a T4, Turing (T4), T4 GPU, 22 GB L4, T4×2). Jetson Orin
# (sm87) is left out: not in ALL_ARCHS. Every pattern starts with a literal, which re finds fast.
_NAMES = (  # arch, names matched as they are and (but for the capitals-only ones) in lower case
    ("sm70", ("V100", "Titan V", "TITAN V")),
    ("sm80", ("A100", "A800", "A30!")),
    ("sm86", ("A10!", "A10G", "A40!", "A6000")),
    ("sm89", ("L20!", "L40!", "L40S", "nvidia-l4")),
    ("sm90", ("H100", "H200", "H800", "H20", "GH200")),
    ("sm100", ("B100", "B200", "GB200")),
    ("sm103", ("B300", "GB300")),
    ("sm121", ("GB10", "DGX Spark", "DGX spark")),
)
# Architecture generations, as guides name them ("fa3 is for Hopper", "on Blackwell use fa4": the
# eighteenth round's guide named no card): a generation stands for its first arch, and only where
# the text names no card of it (an RTX PRO 6000 Blackwell is sm120, not sm100). In capitals only
# ("hopper/" is FA3's source folder). Not Volta or Turing: their cards are named (V100, T4), and
# "Turing" is a word of computing prose.
_GENERATIONS = (("Ampere", "sm80", ("sm80", "sm86")),
                ("Ada Lovelace", "sm89", ("sm89",)), ("Hopper", "sm90", ("sm90",)),
                ("Blackwell", "sm100", ("sm100", "sm103", "sm110", "sm120", "sm121")))
_RTX = ((r"[ -]?20[5-8]0", "sm75"), (r"[ -]?30[5-9]0", "sm86"), (r" A[2-6]000", "sm86"),
        (r"[ -]?40[5-9]0", "sm89"), (r" [2-6]000 Ada", "sm89"), (r"[ -]?50[5-9]0", "sm120"),
        (r" (?i:pro) ?\d000", "sm120"))  # RTX PRO 4000-6000 are all Blackwell
_BEFORE_T4_L4 = (r"(?i:nvidia)[ -]", r"(?i:tesla) ", r"\ba ", r"\ban ", r"\bthe ", r"\bon ", r"\bone ", r"\bGB ", r"\(",
                 r"\dx", r"\dx ", r"\d x ", r"\d×", r"\d× ", r"\d × ")  # (fixed widths: re's look-behind)


def _name(name: str) -> str:
    n, bad = re.escape(name), "A-Za-z0-9#" + "-" * name.startswith("L")  # (#L20-L40: line anchors)
    return rf"{n}(?:(?<![{bad}]{n})|(?<=[1-9]x{n}))s?(?![A-Za-z0-9])"


def _gpu_patterns():
    for arch, names in _NAMES:
        for name in names:
            exact = name.endswith("!")
            name = name.rstrip("!")
            yield _name(name), arch
            if not exact and name.lower() != name:
                yield _name(name.lower()), arch
    for tail, arch in _RTX:
        for rtx in ("RTX", "rtx"):
            yield rf"{rtx}(?<![A-Za-z0-9]{rtx}){tail}(?!\d)", arch
    for word in ("Quadro RTX", "TITAN RTX", "Titan RTX"):
        yield _name(word), "sm75"
    for name, arch in (("T4", "sm75"), ("L4", "sm89")):
        before = "|".join(f"(?<={c}{name})" for c in _BEFORE_T4_L4)
        yield rf"{name}(?![A-Za-z0-9])(?:{before}|(?<![A-Za-z0-9#]{name})(?= ?(?:GPU|\d+ ?GB|x ?\d|× ?\d|\))))", arch
    yield r"Thor(?:(?<=(?i:jetson) Thor)|(?<=(?i:jetson) AGX Thor)|(?<=(?i:drive) AGX Thor))\b", "sm110"


GPU_NAMES = tuple((re.compile(p.encode()), arch) for p, arch in _gpu_patterns())
# An arch written in capitals as prose writes it ("FA3 (SM80-SM90)", "SM100: trtllm_mla": the
# nineteenth round's guide) counts like a generation; build flags (sm_90a, compute_89,
# TORCH_CUDA_ARCH_LIST) say what a binary is compiled for, not where a file runs, and are not read.
_PROSE_ARCHS = tuple((rf"(?<![A-Za-z0-9_])SM ?{a[2:]}(?![0-9])", a, (a,)) for a in ALL_ARCHS if a not in ("sm70", "sm75"))
GENERATION_NAMES = tuple((re.compile(_name(name).encode()), arch, family) for name, arch, family in _GENERATIONS) \
    + tuple((re.compile(pattern.encode()), arch, family) for pattern, arch, family in _PROSE_ARCHS)
assert {arch for _, arch in GPU_NAMES} | {a for _, _, f in GENERATION_NAMES for a in f} <= set(ALL_ARCHS)


def named_archs(source: bytes) -> tuple[str, ...]:
    """The archs of the NVIDIA GPUs the text names (GPU_NAMES, then GENERATION_NAMES, generations
    and capitalised SM numbers, for an arch none of whose cards it names), in ALL_ARCHS order."""
    found = {arch for pattern, arch in GPU_NAMES if pattern.search(source)}
    found |= {arch for pattern, arch, family in GENERATION_NAMES
              if not found.intersection(family) and pattern.search(source)}
    return tuple(arch for arch in ALL_ARCHS if arch in found)
