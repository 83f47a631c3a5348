"""A lookup's `project`: which packages a name or a GitHub address stands for, and what it
changes in matching (a bare line answers for the named kernel library, never over the paste)."""

import pytest

from errkb.projects import GENERAL, ProjectNames

NO_KERNEL_IMAGE = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"


@pytest.fixture(scope="module")
def names(index, data_dir):
    return ProjectNames.load(data_dir, index.evidence_packages)


@pytest.mark.parametrize("project, packages", [
    ("flash-attn", {"flash-attn"}),
    ("flash_attn", {"flash-attn"}),  # as imported
    ("Flash-Attention", {"flash-attn", "flash-attn-4"}),  # the repository's name: both its packages
    ("FlashInfer", {"flashinfer-python"}),  # the repository's name for the PyPI package
    ("https://github.com/Dao-AILab/flash-attention/issues/986", {"flash-attn", "flash-attn-4"}),
    ("facebookresearch/xformers", {"xformers"}),
    ("https://github.com/thu-ml/SageAttention.git", {"sageattention"}),  # known from records' evidence only
    ("sgl-kernel", {"sgl-kernel"}),
])
def test_a_kernel_library_is_named_by_package_pypi_or_repository(names, project, packages):
    assert names.packages(project) == packages


@pytest.mark.parametrize("project", [
    "", "   ", "torch", "pytorch", "vllm", "sglang",
    "https://github.com/sgl-project/sglang/issues/1",  # hosts sgl-kernel too, but is the engine's tracker
    "https://github.com/comfyanonymous/ComfyUI/issues/2", "lllyasviel/FramePack", "not a library",
])
def test_frameworks_engines_and_unknown_projects_name_nothing(names, project):
    assert names.packages(project) == frozenset()
    assert {"torch", "vllm", "sglang"} <= GENERAL


def test_a_bare_line_answers_for_the_named_library_and_says_why(index):
    assert index.match(NO_KERNEL_IMAGE) == []
    [top, *_] = index.match(NO_KERNEL_IMAGE, project=frozenset({"flash-attn", "flash-attn-4"}))
    assert top.id == "fa2-no-kernel-image"  # flash-attn's own record before the generic CUDA one
    assert "the project given is flash-attn" in top.why


def test_what_the_paste_names_ranks_before_the_project(index):
    paste = ("  File \"/x/site-packages/xformers/ops/fmha/flash.py\", line 9, in apply\n"
             + NO_KERNEL_IMAGE)
    [top, *_] = index.match(paste, project=frozenset({"flash-attn"}))
    assert top.id == "xformers-no-kernel-image" and any(w.startswith("the paste names xformers") for w in top.why)


def test_a_project_does_not_make_an_unrelated_line_match(index):
    assert index.match("hello world, all is well\n", project=frozenset({"flash-attn"})) == []
