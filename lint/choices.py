"""The names each vLLM, SGLang and transformers release accepts (data/lint/choices.json, made by
scripts/extract_lint_choices.py from the wheels), and the questions rules ask of them.

A rule asks about one package and one fact (e.g. vllm / attention_backend). With a target version
configured (`[tool.errkb.versions]`, `--target-version`), the answer comes from the newest release
read that is not newer than it; without one, a name counts as wrong only when it is wrong in every
release read.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from functools import lru_cache


def version_key(v: str) -> tuple:
    """'0.4.6.post5' -> (0, 4, 6, 5); good enough to order the releases read and user versions."""
    return tuple(int(p) for p in re.findall(r"\d+", v.replace("post", ".")))


@lru_cache(maxsize=1)
def _releases() -> dict[str, dict[str, dict]]:
    from errkb import layout

    doc = json.loads(layout.lint_choices_path(layout.default_data_dir()).read_text())
    return doc["releases"]


@dataclass(frozen=True)
class Release:
    package: str
    version: str
    facts: dict

    def choices(self, fact: str) -> list[str] | None:
        got = self.facts.get(fact)
        return got["choices"] if got else None

    def value(self, fact: str, default=None):
        got = self.facts.get(fact)
        return got["value"] if got else default

    def mapping(self, fact: str) -> dict[str, str]:
        got = self.facts.get(fact)
        return got["map"] if got else {}


def releases(package: str) -> list[Release]:
    """Every release read, oldest first."""
    rels = _releases().get(package, {})
    return sorted((Release(package, v, f) for v, f in rels.items()), key=lambda r: version_key(r.version))


def release_for(package: str, version: str | None) -> Release | None:
    """The release whose tables stand for `version`: the newest read that is not newer (the
    oldest read for an older version); None when no version is configured."""
    if not version:
        return None
    rels = releases(package)
    older = [r for r in rels if version_key(r.version) <= version_key(version)]
    return older[-1] if older else (rels[0] if rels else None)


def history(package: str, fact: str, accepted) -> str:
    """Where in the releases read a name is accepted, e.g. 'accepted in 0.6.3-0.11.0, not from
    0.12.0'; `accepted(release)` says whether that release takes it."""
    rels = [r for r in releases(package) if r.choices(fact) is not None]
    yes = [r.version for r in rels if accepted(r)]
    if not yes:
        return f"not accepted by any {package} release read ({rels[0].version}-{rels[-1].version})"
    first, last = yes[0], yes[-1]
    after = [r.version for r in rels if version_key(r.version) > version_key(last)]
    span = first if first == last else f"{first}-{last}"
    return f"accepted in {package} {span}" + (f", not from {after[0]}" if after else "")


# the facts that name an attention backend or implementation, in any engine's tables
_NAME_FACTS = ("attention_backend", "mm_attention_backend", "attn_implementation")
# how close a name must be to a known one to be taken for a misspelling of it (difflib's ratio)
NEAR_RATIO = 0.85


def _normal(name: str) -> str:
    return name.strip().lower().replace("-", "_").removesuffix("_vllm_v1")


@lru_cache(maxsize=1)
def _known_names() -> frozenset[str]:
    return frozenset(_normal(c) for rels in _releases().values() for facts in rels.values()
                     for fact in _NAME_FACTS if facts.get(fact) for c in facts[fact]["choices"])


# Names this short are acronyms (fa3, nsa, hsa): a changed letter is another word, not a typo, so
# only a changed, added or dropped digit or separator counts as one edit (fa2 for fa3, fa for fa3),
# after the twenty-fourth held-out round met a fork's `hsa` next to SGLang's `nsa` and `qsa`.
SHORT_NAME = 4


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` becomes `b` by changing, adding or dropping one character (in a short name, one
    that is not a letter)."""
    if abs(len(a) - len(b)) > 1:
        return False
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    if not (a[i + 1:] == b[i + 1:] or a[i + 1:] == b[i:] or a[i:] == b[i + 1:]):
        return False
    edited = a[i:i + 1] + b[i:i + 1] if len(a) == len(b) else (a if len(a) > len(b) else b)[i]
    return min(len(a), len(b)) > SHORT_NAME or not any(c.isalpha() for c in edited)


def known_name(name: str) -> bool:
    """Whether `name` is, in some spelling, a backend name that a vLLM, SGLang or transformers
    release read accepts, or is one typo away from one (`fa2` for `fa3`, `FLASH_ATTN_3` for
    `FLASH_ATTN`). A name far from all of them (`FLASH_ATTN_V100`, `flashprefill`) is most likely a
    fork's, a plugin's or an unreleased branch's own backend, which these tables cannot judge."""
    n, names = _normal(name), _known_names()
    return n in names or any(_one_edit(n, k) for k in names) \
        or bool(difflib.get_close_matches(n, names, n=1, cutoff=NEAR_RATIO))


def newest(package: str, fact: str) -> Release:
    return [r for r in releases(package) if r.choices(fact) is not None][-1]
