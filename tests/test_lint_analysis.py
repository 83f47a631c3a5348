"""What a call resolves to, and which values reach it (the semantics that make the linter better
than grep). Each case is linted with the rule it exercises."""

from __future__ import annotations

import libcst as cst
import pytest

from errkb.lint.analysis import ModuleIndex
from errkb.lint.engine import lint_text

V4 = "sglang.kernels.ops.attention.flash_attention_v4.flash_attn_with_kvcache"


def targets_of_last_call(code: str, module: str = "pkg.mod") -> frozenset[str]:
    index = ModuleIndex(cst.parse_module(code), module=module)
    site = index.calls[-1]
    return index.resolve(site.node.func, site.scope)


@pytest.mark.parametrize("code", [
    "from sglang.kernels.ops.attention.flash_attention_v4 import flash_attn_with_kvcache\nflash_attn_with_kvcache()",
    "from sglang.kernels.ops.attention.flash_attention_v4 import flash_attn_with_kvcache as f\nf()",
    "import sglang.kernels.ops.attention.flash_attention_v4 as m\nm.flash_attn_with_kvcache()",
    "import sglang.kernels.ops.attention.flash_attention_v4\n"
    "sglang.kernels.ops.attention.flash_attention_v4.flash_attn_with_kvcache()",
    "from sglang.kernels.ops.attention import flash_attention_v4\nflash_attention_v4.flash_attn_with_kvcache()",
    "def g():\n    if x:\n        from sglang.kernels.ops.attention.flash_attention_v4 import flash_attn_with_kvcache\n"
    "    flash_attn_with_kvcache()",
    "from sglang.kernels.ops.attention.flash_attention_v4 import flash_attn_with_kvcache\nf = flash_attn_with_kvcache\nf()",
    "class A:\n    def __init__(self):\n        from sglang.kernels.ops.attention import flash_attention_v4 as v4\n"
    "        self.fn = v4.flash_attn_with_kvcache\n    def run(self):\n        self.fn()",
])
def test_resolves_imports_aliases_and_attributes(code):
    assert targets_of_last_call(code) == {V4}


def test_relative_import_uses_the_package_of_the_file():
    code = "from .flash_attention_v4 import flash_attn_with_kvcache\nflash_attn_with_kvcache()"
    assert targets_of_last_call(code, module="sglang.kernels.ops.attention.backend") == {V4}


@pytest.mark.parametrize("code", [
    # a local def, a parameter or a rebinding shadows the import: no target, no finding
    "from sglang.kernels.ops.attention.flash_attention_v4 import flash_attn_with_kvcache\n"
    "def flash_attn_with_kvcache(*a):\n    pass\nflash_attn_with_kvcache()",
    "from sglang.kernels.ops.attention.flash_attention_v4 import flash_attn_with_kvcache\n"
    "def g(flash_attn_with_kvcache):\n    flash_attn_with_kvcache()",
    "flash_attn_with_kvcache()",
    "class A:\n    def flash(self):\n        pass\n    def run(self):\n        self.flash()",
])
def test_unknown_or_shadowed_names_resolve_to_nothing(code):
    assert targets_of_last_call(code) == frozenset()


IMPORT = "from sglang.kernels.ops.attention.flash_attention import flash_attn_with_kvcache\n"


@pytest.mark.parametrize("code,count", [
    (IMPORT + "VER = 4\nflash_attn_with_kvcache(q, kc, vc, k=kn, ver=VER)", 1),  # module constant
    (IMPORT + "def f():\n    ver = 4\n    flash_attn_with_kvcache(q, kc, vc, k=kn, ver=ver)", 1),  # function constant
    (IMPORT + "kw = {'ver': 4, 'k': kn}\nflash_attn_with_kvcache(q, kc, vc, **kw)", 1),  # {...} splat
    (IMPORT + "kw = dict(ver=4)\nkw['k'] = kn\nflash_attn_with_kvcache(q, kc, vc, **kw)", 1),  # dict + kw[x]=
    (IMPORT + "flash_attn_with_kvcache(q, kc, vc, k=None, ver=4)", 0),  # explicit None = absent
    (IMPORT + "flash_attn_with_kvcache(q, kc, vc, k=kn)", 0),  # default ver=3: FA3 updates in place
    (IMPORT + "def f(ver):\n    flash_attn_with_kvcache(q, kc, vc, k=kn, ver=ver)", 0),  # unknown ver
    (IMPORT + "VER = 3\nif x:\n    VER = 4\nflash_attn_with_kvcache(q, kc, vc, k=kn, ver=VER)", 0),  # two values
    (IMPORT + "flash_attn_with_kvcache(q, kc, vc, k=kn, **opts)", 0),  # opaque splat: ver unknown
])
def test_values_are_followed_within_the_module(code, count):
    assert len(lint_text(code, select=["EKB101"])) == count


def test_with_context_does_not_leak_into_nested_functions():
    code = ("import torch.nn.functional as F\nfrom torch.nn.attention import sdpa_kernel, SDPBackend\n"
            "with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n    def later(q, k, v, m):\n"
            "        return F.scaled_dot_product_attention(q, k, v, attn_mask=m)\n")
    assert lint_text(code, select=["EKB301"]) == []


def test_arch_dependent_rules_follow_the_configured_archs():
    code = "from flash_attn.cute import flash_attn_func\nflash_attn_func(q, k, v, num_splits=2)"
    assert lint_text(code, archs=("sm100",)) == []
    assert [f.record_id for f in lint_text(code, archs=("sm90",))] == ["fa4-splitkv-sm90"]
    assert [f.record_id for f in lint_text(code, archs=("sm120", "sm90"))] == ["fa4-sm120-num-splits"]


# what the ROCm and DCU files of the held-out rounds set or run to use their platform
@pytest.mark.parametrize("text", [
    'IMAGE="rocm/vllm-dev:rocm7.1.1_navi_ubuntu22.04_py3.10_pytorch_2.8_vllm_0.10.2rc1"',
    "FROM rocm/vllm:latest", "image: docker.io/rocm/sglang:v0.5.2", "lmsysorg/sglang:v0.4.6.post5-rocm630",
    "docker build -f docker/Dockerfile.rocm .", "pip install torch==2.5.1+rocm6.2",
    "pip install torch --index-url https://download.pytorch.org/whl/rocm6.2",
    "flash_attn-2.8.3+das.opt1.dtk2604-cp310-cp310-linux_x86_64.whl", "vllm:0.8.5-ubuntu22.04-dtk25.04.1-rc5-das1.6",
    "export PATH=/opt/dtk/bin:$PATH", "docker run --device=/dev/kfd --device=/dev/dri", "export HIP_VISIBLE_DEVICES=0,1",
    "-e ROCR_VISIBLE_DEVICES=0", "-e HSA_OVERRIDE_GFX_VERSION=11.0.0", "ENV PYTORCH_ROCM_ARCH=gfx942",
    "Hygon DCU BW10 (gfx936)", "export GPU_ARCHS=gfx950", "gfx90a", "gfx1100", "rocm-smi --showclocks", "rocminfo | grep gfx",
    "hipcc -O3 kernel.cpp", "export VLLM_ROCM_USE_AITER=1", "--attention-backend ROCM_AITER_UNIFIED_ATTN",
    # Hygon's own scripts name the device HCU; Kunlun XPU settings (the twenty-third round)
    "PPO actor/critic and rollout colocated on eight HCU devices", "fit on each 144 GB HCU,",
    "export XMLIR_ENABLE_FAST_FC=1", 'export BKCL_RDMA_NICS="eth1"', "XPU_VISIBLE_DEVICES=0,1",
    # ... and inside names and paths (the twenty-fourth round's verl CI wrapper)
    'MODEL_PATH="${VERL_HCU_MODEL_ROOT}/Qwen3-0.6B"', "export SGLANG_KV_LAYOUT_HCU_FA=0", "/tmp/verl-hcu-ci/run",
    "export USE_DCU_CUSTOM_ALLREDUCE=1", "PYTHONPATH=/home/dcu_megatron/Megatron-LM", "on eight DCU devices",
    "export ASCEND_RT_VISIBLE_DEVICES=0,1", "MUSA_VISIBLE_DEVICES=0", "export MLU_VISIBLE_DEVICES=0",
    "-e HABANA_VISIBLE_DEVICES=all",
])
def test_non_nvidia_targets_are_recognised(text):
    from errkb.lint.archs import file_archs

    assert file_archs(text.encode(), ("sm80", "sm90")) == ((), False, False)


# mentions, not targets: CUDA guides name ROCm as an alternative, CUDA files set the ROCm-only
# VLLM_USE_TRITON_FLASH_ATTN (the ninth round's A30 Dockerfile), libraries test for either platform
@pytest.mark.parametrize("text", [
    "ROCm and CPU use their own selection logic", "Supported on CUDA and ROCm/Vulkan", "ENV VLLM_USE_TRITON_FLASH_ATTN=0",
    "if torch.version.hip:", "rocm_available=False", '"ROCMExecutionProvider"', "import pandas",
    "vllm/attention/backends/rocm/flash.py", "sm_90a, compute_89", "vllm serve m --kv-cache-dtype fp8",
    "SCHCU", "hcu_path = x", "HCUDA", "the XMLIR paper", "SCHCU_MODE=1", "catchcu/x", "EDCU", "the DCUBE tool", "/opt/podcu/",
])
def test_mentions_of_rocm_keep_the_nvidia_archs(text):
    from errkb.lint.archs import file_archs

    assert file_archs(text.encode(), ("sm80", "sm90")) == (("sm80", "sm90"), False, False)


# GPU names as the held-out rounds' files write them (lint/archs.py GPU_NAMES): prose, tables,
# counts, image tags and paths; each maps to its arch, a file naming several to all of them
@pytest.mark.parametrize("text, archs", [
    ("该模型部署需至少两台搭载8张H200显卡的计算节点", ("sm90",)), ("two nodes of 8x H200", ("sm90",)),
    ("on 8xB200s", ("sm100",)), ("4x GB300 node", ("sm103",)), ("PD h20 decode node", ("sm90",)),
    ("Ampere (A100, A10)", ("sm80", "sm86")), ("RunPod, A40 (48 GB)", ("sm86",)), ("SmolLM on an NVIDIA A10G", ("sm86",)),
    ("A10 / A100 / A800 / H20 / H800 / L20", ("sm80", "sm86", "sm89", "sm90")), ("L40S 48GB", ("sm89",)),
    ("GPU_PROFILE auto, l40, a100, h100", ("sm80", "sm90")),  # (L40, like A10-A40 and L20, only in capitals) ("RTX 6000 Ada 48GB", ("sm89",)),
    ("4x NVIDIA RTX A4000 (16GB each)", ("sm86",)), ("Debian-PyTorch-RTX5070Ti", ("sm120",)),
    ("RTX Pro 6000 | Blackwell", ("sm120",)), ("Two RTX PRO 6000 Blackwell (96 GB)", ("sm120",)),
    ("双 RTX 2080 Ti (SM75)", ("sm75",)), ("NVIDIA GB10（DGX Spark）", ("sm121",)), ("vllm-v100:vllm021-cu126", ("sm70",)),
    ("Gemma-2B-IT on T4 GPU", ("sm75",)), ("Tesla T4", ("sm75",)), ("Turing (T4): Supported", ("sm75",)),
    ('"Nvidia T4 ×2" (default)', ("sm75",)), ("Measured on an L4: the probe", ("sm89",)), ("OOM a 22 GB L4", ("sm89",)),
    ('# "gpu_type": "nvidia-l4"', ("sm89",)), ("NVIDIA L4", ("sm89",)), ("Jetson AGX Thor", ("sm110",)),
])
def test_named_gpus_map_to_their_archs(text, archs):
    from errkb.lint.archs import file_archs, named_archs

    assert named_archs(text.encode()) == archs
    assert file_archs(text.encode(), ("sm80", "sm90")) == (archs, True, False)


# architecture generations stand for their first arch, only where no card of theirs is named (the
# eighteenth round's guide: fa3 for Hopper, trtllm_mla for Blackwell, no card); lower case is a word
# or FA3's source folder, not a GPU
@pytest.mark.parametrize("text, archs", [
    ("fa3 on Hopper, trtllm_mla on Blackwell", ("sm90", "sm100")), ("FA3 needs a Hopper GPU", ("sm90",)),
    ("Blackwell: RTX 5090", ("sm120",)), ("Ampere or newer (RTX 3090)", ("sm86",)),
    ("Turing (T4): Supported", ("sm75",)), ("an Ada Lovelace card", ("sm89",)),
    ("cd flash-attention/hopper && python setup.py install", ()), ("Turing-complete", ()),
    ("FlashAttentionBackend (FA3/FA4, SM80-SM90)", ("sm80", "sm90")), ("SM100: trtllm_mla", ("sm100",)),
    ("-gencode arch=compute_90a,code=sm_90a", ()), ("SM1000", ()),
])
def test_generation_names_stand_for_their_archs(text, archs):
    from errkb.lint.archs import named_archs

    assert named_archs(text.encode()) == archs


# words that are not GPUs: a name inside a longer one (A100 is not A10, H200 not H20, GB200 not
# B200), MoE model names (A10B), llama.cpp builds, hex, line anchors, L4/T4 outside a GPU's context
@pytest.mark.parametrize("text", [
    "Qwen3.5-122B-A10B INT4", "DiffusionGemma 26B-A4B", "llama.cpp b2000+", "0xA100", "blob/main/x.py#L20-L40",
    "layer L4", "L4  Agent Protocols", "T4 template", "a2 a16 A2 A16", "ws['a30'] = 1", "author: thorough",
    "sm_90a, compute_89", "H2O", "the A1000 and A1001",
])
def test_words_that_are_not_gpus_keep_the_configured_archs(text):
    from errkb.lint.archs import file_archs, named_archs

    assert named_archs(text.encode()) == ()
    assert file_archs(text.encode(), ("sm80", "sm90")) == (("sm80", "sm90"), False, False)


def test_a_name_inside_a_longer_one_is_that_one():
    from errkb.lint.archs import named_archs

    assert named_archs(b"A100") == ("sm80",) and named_archs(b"H200") == ("sm90",)  # not A10's sm86
    assert named_archs(b"GB200") == ("sm100",) and named_archs(b"GB300") == ("sm103",)  # not GB10's sm121
    assert named_archs(b"RTX 4090 and RTX 5090") == ("sm89", "sm120")


def test_rocm_evidence_wins_over_named_gpus():
    from errkb.lint.archs import file_archs

    assert file_archs(b"MI300X, not H100\nexport HIP_VISIBLE_DEVICES=0", ("sm80", "sm90")) == ((), False, False)


def test_a_lint_run_leaves_no_state_behind(tmp_path):
    import sys

    from errkb.lint.engine import lint_text

    before = sys.getrecursionlimit()
    lint_text("import torch\n" + "x = " + "(" * 200 + "1" + ")" * 200 + "\n", path="deep.py")
    assert sys.getrecursionlimit() == before
    from errkb.lint import analysis
    assert not any(isinstance(v, dict) and v for k, v in vars(analysis).items() if k.startswith("_") and k.endswith("cache"))


# A name one edit from a backend name is taken for its misspelling, except that in a short name
# (an acronym) only a digit or separator may differ: `hsa` is a fork's backend, not a typo of `nsa`.
@pytest.mark.parametrize("name, known", [
    ("fa2", True), ("fa", True), ("FLASH_ATTN_3", True), ("flashinfr", True), ("tritn", True), ("nsa", True),
    ("hsa", False), ("qsb", False), ("flashprefill", False), ("FLASH_ATTN_V100", False),
])
def test_a_short_name_is_a_typo_only_by_a_digit(name, known):
    from errkb.lint import choices

    assert choices.known_name(name) is known


def test_only_short_module_lists_are_spliced():
    """A module-level list of options is spliced into the command lines that name it; a long one is
    data (splicing a 50,000-word list into 2,000 joins ran past the file timeout)."""
    import ast

    import libcst as cst

    from errkb.lint import launch_python, pyfacts

    short, long_ = "FLAGS = ['--tp', '1']\n", "DATA = [" + "'w'," * (pyfacts.MAX_SPLICED + 1) + "]\n"
    assert set(pyfacts.module_lists(ast.parse(short + long_))) == {"FLAGS"}
    assert set(launch_python._module_lists(cst.parse_module(short + long_))) == {"FLAGS"}
