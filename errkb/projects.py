"""What a lookup's `project` names: the errkb packages a paste may be taken to come from.

A bare line that many libraries print (`no kernel image is available ...`, `CUDA_HOME environment
variable is not set`) answers only when the paste names a library (`MatchIndex.withheld`): from
the text alone it is more often some other CUDA project's. Someone who knows which library they
were running, or a bot answering on a library's own issue tracker, can say so beside the paste:
a package name (`flash-attn`, `flashinfer`, `vllm`) or a GitHub address (`owner/name`, or any
URL inside the repository). The packages it names then count as the paste's evidence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from errkb import layout

MAX_PROJECT_CHARS = 200
_REPO = re.compile(r"([\w.-]+)/([\w.-]+?)(?:\.git)?(?:[/?#]|$)")  # owner/name, after any github.com/
# Frameworks and engines run far more than attention: that a paste comes from torch, Triton,
# transformers, vLLM, SGLang or ComfyUI says nothing about which kernel printed a bare CUDA line
# (on vLLM's and SGLang's trackers most such lines are not attention errors, docs/lookup.md).
# A project naming one of them, or a repository hosting one (SGLang's also hosts sgl-kernel),
# names no package; the kernel libraries themselves (flash-attn, FlashInfer, xFormers, ...) do.
GENERAL = frozenset({"torch", "pytorch-aten", "pytorch-headers", "triton", "transformers", "diffusers",
                     "vllm", "sglang", "comfyui", "ktransformers"})


def _key(name: str) -> str:
    """Package names as people write them: `flash_attn`, `Flash-Attention`, `FlashInfer`."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


@dataclass(frozen=True)
class ProjectNames:
    by_repo: dict[str, frozenset[str]]  # "owner/name", lower case -> packages
    by_name: dict[str, frozenset[str]]  # _key(a package's, PyPI or repository name) -> packages

    @classmethod
    def load(cls, data_dir: Path, known: Iterable[str]) -> "ProjectNames":
        """From data/packages.json (each harvested package's repository and PyPI name) and the
        packages records name as evidence (`known`: SageAttention, FlashMLA, ...)."""
        raw = json.loads((Path(data_dir) / layout.PACKAGES).read_text(encoding="utf-8"))
        by_repo: dict[str, set[str]] = {}
        by_name: dict[str, set[str]] = {}
        for package in known:
            by_name.setdefault(_key(package), set()).add(package)
        for package, spec in raw.items():
            for name in (package, (spec.get("registry") or {}).get("pypi") or package):
                by_name.setdefault(_key(name), set()).add(package)
            if repo := spec.get("repo"):
                by_repo.setdefault(repo.lower(), set()).add(package)
        for repo, packages in by_repo.items():  # `flash-attention` names the repository's packages
            by_name.setdefault(_key(repo.split("/")[1]), set()).update(packages)
        return cls({k: frozenset(v) for k, v in by_repo.items()}, {k: frozenset(v) for k, v in by_name.items()})

    def packages(self, project: str) -> frozenset[str]:
        """The packages `project` names: none for a name or repository errkb does not know (a
        downstream project's tracker says nothing about which library failed), nor for one
        that is or hosts a framework or engine (`GENERAL`)."""
        text = project.strip()
        if "/" in text and (found := _REPO.match(text.split("github.com/", 1)[-1])):
            owner, name = found[1].lower(), found[2].lower()
            packages = self.by_repo.get(f"{owner}/{name}") or self.by_name.get(_key(name), frozenset())
        else:
            packages = self.by_name.get(_key(text), frozenset())
        return frozenset() if packages & GENERAL else packages
