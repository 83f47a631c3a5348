"""The wild corpus (tests/wild/): real pastes sampled without looking at the records.

Labels name the error (the decisive line, the library, the family), never an errkb record,
so they could be written and the test split frozen before the records that answer them.
How the pastes were sampled is in tests/wild/SAMPLING.md; this module holds the split rule
and the scoring, so the report script and the tests agree on both.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from errkb import templates
from errkb.match import Match, MatchIndex
from errkb.projects import ProjectNames

WILD_DIR = Path(__file__).resolve().parent.parent / "tests" / "wild"
DEV_SHARE = 0.6
# every search hit of every round, gzipped: as text it was a quarter of the tracked tree, which every
# device call carries (tests/test_gpu_payload.py)
HITS = "hits.jsonl.gz"

# Which errkb package names and backends speak for a labelled library.
LIBRARY_PACKAGES: dict[str, set[str]] = {
    "flash-attn": {"flash-attn"},
    "flash-attn-4": {"flash-attn-4"},
    "vllm-flash-attn": {"flash-attn", "vllm"},
    "flashinfer": {"flashinfer-python"},
    "vllm": {"vllm"},
    "sglang": {"sglang"},
    "sgl-kernel": {"sgl-kernel", "sglang-kernel"},
    "torch": {"torch", "pytorch-aten", "pytorch-headers"},
    "transformers": {"transformers"},
    "xformers": {"xformers"},
    "triton": {"triton"},
    "flashmla": {"flashmla"},
}
LIBRARY_BACKENDS: dict[str, set[str]] = {
    "flash-attn": {"fa2", "fa3"},
    "flash-attn-4": {"fa4"},
    "vllm-flash-attn": {"fa2", "fa3"},
    "flashinfer": {"flashinfer", "trtllm"},
    "vllm": {"vllm"},
    "sglang": {"sglang"},
    "sgl-kernel": {"fa3", "flashmla", "cutlass-mla", "sglang"},
    "torch": {"sdpa", "flex-attention", "cudnn"},
    "transformers": set(),
    "xformers": {"xformers"},
    "triton": {"triton"},
    "flashmla": {"flashmla"},
}


def split(url: str) -> str:
    """'dev' or 'test', from the URL alone (SAMPLING.md section 4)."""
    value = int(hashlib.sha256(url.encode()).hexdigest()[:8], 16) / 2**32
    return "dev" if value < DEV_SHARE else "test"


_THREAD_PATH = re.compile(r"/([\w.-]+)/([\w.-]+)/(issues|pull)/(\d+)(?:[/?#]|$)")
_OTHER_FORGES = ("gitlab.com", "gitee.com", "codeberg.org", "bitbucket.org")


def github_thread(url: str) -> str | None:
    """The github.com address of an issue or pull-request thread that a page shows, or None.

    Round 52 samples the `pages` corpus, where GitHub threads appear behind mirror and proxy
    hosts (github.<something>, gitlite.zycloud.tk, a proxy's `url=` parameter); naming each by its
    github.com address lets duplicates and the split see one thread, wherever it was served."""
    parts = urlsplit(url)
    for target in parse_qs(parts.query).get("url", []):
        if urlsplit(target).netloc == "github.com":
            return github_thread(target)
    host = parts.netloc.lower()
    if any(host == forge or host.endswith("." + forge) for forge in _OTHER_FORGES):
        return None
    found = _THREAD_PATH.match(parts.path)
    return f"https://github.com/{found[1]}/{found[2]}/{found[3]}/{found[4]}" if found else None


@dataclass(frozen=True)
class Label:
    file: str
    url: str
    in_scope: bool
    message: str
    library: str
    family: str
    note: str

    @property
    def part(self) -> str:
        return split(self.url)


def load_labels(wild_dir: Path = WILD_DIR) -> list[Label]:
    fields = Label.__dataclass_fields__
    lines = (wild_dir / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    return [Label(**{k: v for k, v in json.loads(line).items() if k in fields}) for line in lines if line.strip()]


def paste_text(label: Label, wild_dir: Path = WILD_DIR) -> str:
    return (wild_dir / "pastes" / label.file).read_text(encoding="utf-8")


def load_hits(wild_dir: Path = WILD_DIR) -> list[dict]:
    """Every recorded search hit, in order (SAMPLING.md section 3)."""
    with gzip.open(wild_dir / HITS, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def write_hits(hits: list[dict], wild_dir: Path = WILD_DIR) -> None:
    """Write the hit list whole (mtime 0: the same hits give the same bytes)."""
    text = "".join(json.dumps(h, ensure_ascii=False) + "\n" for h in hits)
    (wild_dir / HITS).write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))


def round_urls(number: int, wild_dir: Path = WILD_DIR) -> set[str]:
    """The URLs that became pastes from round `number`'s queries (SAMPLING.md section 1), so a
    round can be scored as a fresh sample before any record or matcher change is made for it."""
    queries = json.loads((wild_dir / "queries.json").read_text(encoding="utf-8"))
    starts = sorted({0} | {v["first_index"] for k, v in queries.items() if k.startswith("round") and isinstance(v, dict)})
    first = 0 if number == 1 else queries[f"round{number}"]["first_index"]
    end = next((s for s in starts if s > first), len(queries["queries"]))
    return {hit["url"] for hit in load_hits(wild_dir) if hit["decision"] == "paste" and first <= hit["q"] < end}


def frozen_digest(wild_dir: Path = WILD_DIR) -> str:
    """sha256 over the test split's labels and pastes, in file order: what test.sha256 freezes."""
    digest = hashlib.sha256()
    for label in sorted((x for x in load_labels(wild_dir) if x.part == "test"), key=lambda x: x.file):
        digest.update(json.dumps(label.__dict__, sort_keys=True, ensure_ascii=False).encode())
        digest.update(paste_text(label, wild_dir).encode())
    return digest.hexdigest()


@dataclass
class Outcome:
    label: Label
    got: list[Match]
    verdict: str  # "right", "wrong", "abstained", or for out-of-scope pastes "quiet" / "spoke"


def libraries_of(packages: set[str], backends: set[str] = frozenset()) -> set[str]:
    """The labelled libraries that a set of errkb package names and backends speak for."""
    return {lib for lib in LIBRARY_PACKAGES if LIBRARY_PACKAGES[lib] & packages or LIBRARY_BACKENDS[lib] & backends}


def judge(label: Label, text: str, got: list[Match], speaks_for: dict[str, set[str]]) -> str:
    """A match is right when its span overlaps the labelled line (a line ending in a colon, or
    pip's and uv's `×` headline over its box or `╰─▶` causes, takes in the lines it announces,
    see `_listing_end`; or it matched text that the
    labelled line repeats, or the labelled line is itself an instance of its template: the same
    error printed twice, once in a summary line) and it is about the labelled library: by the
    packages its template occurs in, or for a record by its backends and evidence."""
    if not label.in_scope:
        return "quiet" if not got else "spoke"
    if not got:
        return "abstained"
    top = got[0]
    start = text.find(label.message)
    announces = start >= 0 and (label.message.rstrip().endswith(":") or label.message.lstrip().startswith("×"))
    end = _listing_end(text, start) if announces else start + len(label.message)
    overlaps = start >= 0 and top.span[0] < end and start < top.span[1]
    # the same message printed again (a warning repeated before the final exception) counts too
    overlaps = overlaps or len(top.matched_text.strip()) >= 8 and top.matched_text.strip() in label.message
    overlaps = overlaps or templates.Finder(top.template).search(label.message) is not None
    libraries = libraries_of(set(top.packages)) | speaks_for.get(top.id, set())
    about = label.library == "other" or label.library in libraries
    return "right" if overlaps and about else "wrong"


def _listing_end(text: str, start: int) -> int:
    """Where a message that ends in a colon ("No operator found ... with inputs:") stops: it
    announces the lines below it (inputs, each kernel's reasons), which are part of the same
    message, up to a blank line or the next traceback."""
    head = text[text.rfind("\n", 0, start) + 1:]
    indent = len(head) - len(head.lstrip(" \t"))
    at = text.find("\n", start)
    while at >= 0:
        nxt = text.find("\n", at + 1)
        line = text[at + 1:nxt if nxt >= 0 else len(text)]
        if line.lstrip().startswith(("Traceback ", 'File "')):
            return at
        if not line.strip():
            # a blank line inside quoted source (Triton's CompilationError quotes the kernel up to the
            # failing line, blank lines and all) is not the end: the message goes on when the next
            # line that holds anything is indented deeper than the labelled line
            following = re.match(r"(?:[ \t]*\n)*([ \t]*)\S", text[at + 1:])
            if following is None or len(following.group(1)) <= indent:
                return at
        at = nxt
    return len(text)


def evaluate(index: MatchIndex, wild_dir: Path = WILD_DIR, names: ProjectNames | None = None,
             text_only: list[Outcome] | None = None) -> list[Outcome]:
    """Every labelled paste matched and judged. With `names`, each paste is looked up with the
    project its thread's repository names (`ProjectNames.packages(url)`): what a bot answering on
    that tracker, or a user who says which library they ran, would pass beside the text. A paste
    whose thread names none is looked up as text only: given, `text_only` (this function's
    outcomes without `names`) answers for those, unmatched again."""
    speaks_for = {r.id: libraries_of({e.package for e in r.evidence}, set(r.backends)) for r in index.dataset.records}
    known = {o.label.file: o for o in text_only or ()}
    out = []
    for label in load_labels(wild_dir):
        project = names.packages(github_thread(label.url) or "") if names else frozenset()
        if not project and label.file in known:
            out.append(known[label.file])
            continue
        text = paste_text(label, wild_dir)
        got = index.match(text, limit=3, project=project)
        out.append(Outcome(label, got, judge(label, text, got, speaks_for)))
    return out


def summary(outcomes: list[Outcome]) -> dict[str, int | float]:
    inside = [o for o in outcomes if o.label.in_scope]
    outside = [o for o in outcomes if not o.label.in_scope]
    count = lambda v, xs: sum(o.verdict == v for o in xs)  # noqa: E731
    return {
        "pastes": len(outcomes), "in_scope": len(inside), "no_error": len(outside),
        "right": count("right", inside), "wrong": count("wrong", inside), "abstained": count("abstained", inside),
        "quiet": count("quiet", outside),
        "top1": count("right", inside) / len(inside) if inside else 0.0,
        "quiet_share": count("quiet", outside) / len(outside) if outside else 1.0,
    }
