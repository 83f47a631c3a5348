"""The errkb data model: the one source of truth for records and sites.

`data/schema/*.schema.json` is generated from these classes (`errkb schema --write`);
a test fails when the committed schema and the models disagree.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

RECORD_ID_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
SITE_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*:[0-9a-f]{12}$"

RecordId = Annotated[str, Field(pattern=RECORD_ID_PATTERN, min_length=3, max_length=80)]
SiteId = Annotated[str, Field(pattern=SITE_ID_PATTERN)]
NonEmpty = Annotated[str, Field(min_length=1)]

Backend = Literal[
    "fa2",  # FlashAttention 2 (flash-attn csrc/flash_attn)
    "fa3",  # FlashAttention 3 (flash-attn hopper/, sgl-kernel's FA3 build)
    "fa4",  # FlashAttention 4 (flash-attn-4, CuTe DSL; SGLang's vendored copy)
    "flashinfer",
    "sdpa",  # torch.nn.functional.scaled_dot_product_attention
    "flex-attention",
    "triton",
    "flashmla",
    "trtllm",
    "cutlass-mla",
    "aiter",
    "xformers",
    "cudnn",
    "sglang",  # SGLang's own dispatch / backend selection layer
    "vllm",  # vLLM's own dispatch / backend selection layer
]

GpuArch = Literal[
    "sm70", "sm75", "sm80", "sm86", "sm87", "sm89", "sm90",
    "sm100", "sm103", "sm110", "sm120", "sm121", "rocm", "cpu", "any",
]

SiteKind = Literal[
    "raise",  # Python raise
    "assert",  # Python assert with a message
    "warning",  # warnings.warn
    "log-error",  # logger.error / logger.exception / logger.critical
    "log-warning",  # logger.warning
    "log-info",  # logger.info: an explanation only a record can give meaning to
    "check",  # C++ check macro: TORCH_CHECK, FLASHINFER_CHECK, TVM_FFI_ICHECK, ...
    "check-warning",  # C++ warning macro: TORCH_WARN, ...
    "throw",  # C++ throw
]

VerificationStatus = Literal["unverified", "confirmed", "refuted", "disputed", "error", "skipped"]

# How users reach a record without calling the raising function themselves (errkb.verify.spec.ENTRY_KINDS):
EntryKind = Literal[
    "sglang-server",  # python -m sglang.launch_server / sglang.Engine(...): ServerArgs and what the server builds from them
    "vllm-engine",  # vllm serve / LLM(...): EngineArgs, the engine config and the attention selector
    "transformers-model",  # transformers' from_pretrained / from_config(..., attn_implementation=...)
]
EntryVerdict = Literal["reached", "preempted", "not-raised", "error", "skipped", "not-run"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------- sites (breadth)


class Occurrence(_Strict):
    """Where a site stands in one harvested version."""

    version: NonEmpty
    lines: list[Annotated[int, Field(ge=1)]] = Field(min_length=1)


class Site(_Strict):
    """One user-visible message that a package's released code can emit."""

    id: SiteId
    package: NonEmpty
    path: NonEmpty = Field(description="Path in the upstream repository (not in the wheel).")
    language: Literal["python", "cpp"]
    kind: SiteKind
    error_class: str | None = Field(default=None, description="Exception or warning class users see, when known.")
    template: NonEmpty = Field(description="Message with parameters as {name} placeholders.")
    function: str | None = None
    occurrences: list[Occurrence] = Field(min_length=1, description="Oldest version first.")

    @staticmethod
    def make_id(package: str, path: str, template: str) -> str:
        digest = hashlib.sha1(f"{package}\0{path}\0{template}".encode()).hexdigest()[:12]
        return f"{package}:{digest}"

    @property
    def versions(self) -> list[str]:
        return [o.version for o in self.occurrences]


# ---------------------------------------------------------------- records (depth)


class SourceLocation(_Strict):
    """Where upstream raises the error, pinned to the release (and git ref) that was read."""

    package: NonEmpty
    version: NonEmpty = Field(description="Released package version the line number refers to.")
    repo: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")]
    path: NonEmpty = Field(description="Path in the upstream repository.")
    line: int = Field(ge=1)
    ref: str | None = Field(
        default=None, description="Git tag or commit whose file matches that release; null when none is known.")

    @computed_field  # derived, so never stored twice
    @property
    def url(self) -> str | None:
        if self.ref is None:
            return None
        return f"https://github.com/{self.repo}/blob/{self.ref}/{self.path}#L{self.line}"


class ReleaseRange(_Strict):
    """The first and last release that raise the error, and how sure each end is: found by
    checking every release between and around the harvested ones (data/versions/boundaries.json),
    or, where no check was made, only bounded by the harvested releases."""

    first: NonEmpty = Field(description="Oldest release known to raise it.")
    first_found: bool = Field(description=(
        "True when the release before `first` was read and does not raise it; false when older "
        "releases may raise it too (not checked, unreadable, or not on the registry)."))
    before_first: str | None = Field(default=None, description="The release checked just before `first`.")
    last: NonEmpty = Field(description="Newest release known to raise it.")
    last_status: Literal["found", "newest", "bounded"] = Field(description=(
        "found: the release after `last` was read and does not raise it; newest: `last` is the "
        "newest release on the registry when checked; bounded: newer releases were not checked."))
    after_last: str | None = Field(default=None, description="The release checked just after `last`.")
    releases_checked: int = Field(ge=0, description="Releases whose files were read for this message.")
    not_raised_between: list[str] = Field(default=[], description=(
        "Checked releases between `first` and `last` that do not raise it (presence is not monotone)."))
    basis: NonEmpty = Field(description="Which releases were checked, or why the ends are only bounded.")
    checked_on: str | None = Field(default=None, description="When the releases were checked.")

    @computed_field  # one wording for the CLI, the web page and the API
    @property
    def summary(self) -> str:
        if self.last_status == "found":
            last = f"{self.last} ({self.after_last} no longer raises it)"
        elif self.last_status == "newest":
            last = f"{self.last} (the newest release{', ' + self.checked_on if self.checked_on else ''})"
        else:
            last = f"at least {self.last}"
        gaps = f"; not raised by {', '.join(self.not_raised_between)} in between" if self.not_raised_between else ""
        if self.first_found:
            return f"raised from {self.first} (first release found; {self.before_first} does not raise it) to {last}{gaps}"
        return f"raised in releases ≤ {self.first} … {last}{gaps} (first release not found: {self.basis})"


class AffectedVersions(_Strict):
    """Versions of one package that raise the error: the harvested ones, and the release range."""

    package: NonEmpty
    first_seen: NonEmpty = Field(description="Oldest harvested version that raises it.")
    last_seen: NonEmpty = Field(description="Newest harvested version that raises it.")
    removed_in: str | None = Field(default=None, description="First harvested version after last_seen.")
    versions: list[str] = Field(description="Every harvested version that raises it.")
    releases: ReleaseRange = Field(description="First and last release that raise it, checked beyond the harvested ones.")


class Triggers(_Strict):
    """When the error fires."""

    conditions: list[NonEmpty] = Field(min_length=1)
    arguments: list[str] = []
    dtypes: list[str] = []
    head_dims: list[str] = []
    flags: list[str] = Field(default=[], description="Server flags or environment variables involved.")


class Fix(_Strict):
    title: NonEmpty
    explanation: NonEmpty
    before: str | None = None
    after: str | None = None
    language: Literal["python", "shell", "text"] = "python"
    caveats: str | None = None


class Evidence(_Strict):
    """Text in a paste that ties a generic message to one library: a module, `.so`, path or
    log name (`flash_attn_2_cuda`, `/flashinfer/`, `flash_fwd_launch_template.h`)."""

    contains: NonEmpty = Field(description="Text the paste must contain, anywhere, letter case kept.")
    package: NonEmpty = Field(description="The library that text names.")


class Verification(_Strict):
    status: VerificationStatus = "unverified"
    cases: list[str] = []
    note: str | None = None


class EntryPoint(_Strict):
    """A documented way users reach the record's message through a server, an engine or model
    loading. Whether they do (the record's message comes first) is not written here: it comes from
    the case step `entry_<kind>` of the record's case file (RecordDetail.entry_point_results)."""

    kind: EntryKind
    call: NonEmpty = Field(description="What the user runs, with the arguments that lead to the message.")
    note: str | None = Field(default=None, description="What the step goes through and where it stops short of a real launch.")


class Provenance(_Strict):
    sources: list[NonEmpty] = Field(min_length=1, description="What was read: released files, issues, docs.")
    read_on: dt.date
    seed: str | None = Field(default=None, description="Seed record this one started from.")
    corrections: list[str] = Field(default=[], description="What the seed got wrong.")


class Record(_Strict):
    """A curated explanation of one error, in errkb's own words."""

    id: RecordId
    title: Annotated[str, Field(min_length=5, max_length=140)]
    status: Literal["active", "retired"] = "active"
    retired_note: str | None = None
    kind: Literal["error", "warning"] = "error"
    backends: list[Backend] = Field(min_length=1)
    error_class: NonEmpty
    message: NonEmpty = Field(description="The message as users see it, with example values.")
    template: NonEmpty = Field(description="The message with parameters as {name} placeholders.")
    meaning: NonEmpty
    triggers: Triggers
    situations: list[NonEmpty] = Field(min_length=1)
    fixes: list[Fix] = Field(min_length=1)
    related: list[RecordId] = []
    tags: list[Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.+-]*$")]] = []
    gpu_archs: list[GpuArch] = Field(min_length=1)
    lint_rules: list[str] = []
    verification: Verification = Verification()
    sites: list[SiteId] = Field(
        default=[], description="Harvested sites this record explains; where it is raised and which "
        "versions raise it are derived from them, never stored twice. Empty only with `origin`.")
    origin: str | None = Field(
        default=None, description="Where the text comes from when no harvested package raises it: the "
        "CUDA runtime, Python's import system, the dynamic loader, a compiler. Required when `sites` is empty.")
    evidence: list[Evidence] = Field(
        default=[], description="When set, the record answers only pastes that contain one of these "
        "texts, and then ranks above records without evidence that share its message.")
    failing_file: list[Evidence] = Field(
        default=[], description="When the matched line names the file that failed just before the message "
        "(`/x/vllm/_C.abi3.so: undefined symbol: ...`), the record answers only if that name contains one of "
        "these texts (another library's extension is not this record's); a line that names no file is "
        "answered as before.")
    wraps_cause: bool = Field(
        default=False, description="The message is a wrapper that prints the real error with it (a loader "
        "listing why each attempt failed, a build's summary line): when another record also matches the "
        "paste, that record answers first and this one follows.")
    advisory: bool = Field(
        default=False, description="A warning that the program goes on past, on a degraded or approximate path "
        "(a feature the chosen backend lacks, results that may differ), printed at start-up whether or not "
        "anything fails later: when another record also matches the paste, that record answers first and this "
        "one follows, as for wraps_cause.")
    catch_all: bool = Field(
        default=False, description="A record for a message shape that many specific records share (any name "
        "missing from an attention library's module): when another record also matches the paste, that record "
        "answers first and this one follows, as for wraps_cause.")
    entry_points: list[EntryPoint] = Field(
        default=[], description="Servers, engines and model loading through which users reach the message; "
        "each is checked by the case step entry_<kind>. Empty when users reach it only by calling a library themselves.")
    provenance: Provenance


class VerificationRun(_Strict):
    """The cases of one record as run in one environment (derived from data/verification/)."""

    environment: str
    gpu: str
    compute_capability: str | None = None
    torch: str | None = None
    libraries: dict[str, str] = {}
    cases: dict[str, str] = Field(description="Case id -> confirmed / refuted / error / skipped.")
    finished_at: str | None = None


class EntryPointResult(_Strict):
    """What one entry point showed in one environment (derived from data/verification/)."""

    kind: EntryKind
    call: str
    case: str = Field(description="The case id of the entry-point step.")
    verdict: EntryVerdict = Field(description=(
        "reached: the record's message is what the user sees first; preempted: another message comes "
        "first (first_seen); not-raised: the call goes through without it; not-run: no result yet."))
    first_seen: str | None = Field(default=None, description="The class and message the user sees first, when not the record's.")
    environment: str | None = None
    gpu: str | None = None
    compute_capability: str | None = None


class RecordDetail(Record):
    """A record with the facts derived from its sites, as the API, CLI and web page show it."""

    packages: list[str]
    raised_at: list[SourceLocation]
    affected: list[AffectedVersions]
    sites_missing_in_newest: list[SiteId] = Field(
        default=[], description="Linked sites absent from their package's newest harvested version.")
    verified_in: list[VerificationRun] = Field(default=[], description="Where its cases ran, and how each went.")
    entry_point_results: list[EntryPointResult] = Field(
        default=[], description="Each entry point's verdict in each environment its step ran in (not-run when none).")
