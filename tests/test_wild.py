"""The wild corpus (tests/wild/): well-formed, its test split frozen, and lookup held to a floor
on it. Figures per split come from bench/eval_report.py."""

import json

import pytest

from errkb import wild
from errkb.projects import ProjectNames

LIBRARIES = set(wild.LIBRARY_PACKAGES) | {"other"}
FAMILIES = {"arch-mismatch", "abi-mismatch", "missing-module", "build-failure", "unsupported-gpu",
            "unsupported-dtype", "unsupported-head-dim", "unsupported-feature", "shape-or-argument",
            "resource-limit", "backend-selection", "numerical", "other"}


@pytest.fixture(scope="module")
def labels():
    return wild.load_labels()


@pytest.fixture(scope="module")
def outcomes(index):
    return wild.evaluate(index)


def test_the_split_depends_on_the_url_alone():
    assert wild.split("https://github.com/vllm-project/vllm/issues/1") == wild.split("https://github.com/vllm-project/vllm/issues/1")
    parts = [wild.split(f"https://github.com/o/r/issues/{n}") for n in range(2000)]
    assert 0.55 < parts.count("dev") / len(parts) < 0.65


def test_every_label_is_well_formed(labels):
    assert len({x.file for x in labels}) == len(labels) and len({x.url for x in labels}) == len(labels)
    for label in labels:
        text = wild.paste_text(label)
        assert text.strip(), label.file
        assert label.library in LIBRARIES and label.family in FAMILIES, label.file
        assert label.message in text, f"{label.file}: the labelled message is not in the paste"
        assert not label.in_scope or label.message.strip(), f"{label.file}: in scope with no message"


def test_every_paste_came_from_a_recorded_hit(labels):
    hits = wild.load_hits()
    pasted = {h["url"] for h in hits if h["decision"] == "paste"}
    assert pasted == {x.url for x in labels}


def test_a_round_holds_the_pastes_of_its_own_queries(labels):
    hits = wild.load_hits()
    rounds = [wild.round_urls(n) for n in range(1, 6)]
    assert all(rounds) and sum(map(len, rounds)) == len({x.url for x in labels} & set().union(*rounds))
    later = {h["url"] for h in hits if h["decision"] == "paste" and 240 <= h["q"] < 288}
    assert wild.round_urls(5) == later - set().union(*rounds[:4])


def test_the_test_split_is_frozen():
    frozen = (wild.WILD_DIR / "test.sha256").read_text().split()[0]
    assert wild.frozen_digest() == frozen, "tests/wild's test split changed: it is frozen (SAMPLING.md)"


def test_pastes_without_an_attention_error_mostly_get_no_record(outcomes):
    s = wild.summary([o for o in outcomes if o.label.part == "dev"])
    assert s["no_error"] >= 10 and s["quiet_share"] >= 0.95, s


def test_lookup_keeps_its_floor_on_the_frozen_test_split(outcomes):
    floor = json.loads((wild.WILD_DIR / "floor.json").read_text())
    s = wild.summary([o for o in outcomes if o.label.part == "test"])
    assert s["top1"] >= floor["test_top1"], s
    assert s["wrong"] / s["in_scope"] <= floor["test_wrong_share"], s
    assert s["quiet_share"] >= floor["test_quiet_share"], s


def test_the_threads_project_keeps_its_own_floor_and_quiets(index, outcomes, data_dir):
    """Looked up with the thread's repository as the project (what a bot on that tracker would
    pass): its own ratchet on test, and the pastes without an attention error stay quiet."""
    floor = json.loads((wild.WILD_DIR / "floor.json").read_text())
    judged = wild.evaluate(index, names=ProjectNames.load(data_dir, index.evidence_packages), text_only=outcomes)
    test = wild.summary([o for o in judged if o.label.part == "test"])
    dev = wild.summary([o for o in judged if o.label.part == "dev"])
    assert test["top1"] >= floor["test_project_top1"], test
    assert test["wrong"] / test["in_scope"] <= floor["test_wrong_share"], test
    assert min(test["quiet_share"], dev["quiet_share"]) >= floor["test_quiet_share"], (test, dev)


def test_the_judge_takes_the_same_error_printed_on_another_line():
    """The top match sits on a summary line; the labelled line is another instance of its template."""
    from errkb.match import Match

    text = "common_ops.so: undefined symbol: cuGreenCtxStreamCreate.\nImportError: x/sgl_kernel/common_ops.so: undefined symbol: cuGreenCtxStreamCreate\n"
    label = wild.Label("f.txt", "https://github.com/o/r/issues/1", True,
                       "ImportError: x/sgl_kernel/common_ops.so: undefined symbol: cuGreenCtxStreamCreate", "sgl-kernel", "abi-mismatch", "")
    match = Match("r", "record", 0.9, (15, 57), text[15:57], {"symbol": "GreenCtxStreamCreate."},
                  "undefined symbol: cu{symbol}", [], {})
    assert wild.judge(label, text, [match], {"r": {"sgl-kernel"}}) == "right"
    other = Match("r", "record", 0.9, (15, 57), text[15:57], {}, "undefined reference to {symbol}", [], {})
    assert wild.judge(label, text, [other], {"r": {"sgl-kernel"}}) == "wrong"


def test_the_judge_reads_a_compilation_error_across_blank_lines_of_its_quoted_source():
    """Triton's CompilationError quotes the kernel up to the failing line, blank lines included, and
    prints the cause after the caret: a blank line followed by an indented line does not end the
    message its header announces; one followed by an unindented line still does."""
    from errkb.match import Match

    text = ("CompilationError: at 3:14:\n"
            "    x = tl.load(p)\n"
            "\n"
            "    n = tl.sum(x, axis=1, keep_dims=True)\n"
            "              ^\n"
            "TypeError(\"sum() got an unexpected keyword argument 'keep_dims'\")\n")
    label = wild.Label("f.txt", "https://github.com/o/r/issues/1", True, "CompilationError: at 3:14:", "triton", "other", "")
    cause = text.index("sum()")
    hit = Match("r", "record", 1.0, (cause, cause + 20), text[cause:cause + 20], {}, "{f}() got x", [], {})
    assert wild.judge(label, text, [hit], {"r": {"triton"}}) == "right"
    cut = text.replace("\n    n = tl.sum", "\nn = tl.sum")
    cause = cut.index("sum()")
    hit = Match("r", "record", 1.0, (cause, cause + 20), cut[cause:cause + 20], {}, "{f}() got x", [], {})
    assert wild.judge(label, cut, [hit], {"r": {"triton"}}) == "wrong"


def test_the_judge_takes_a_line_that_the_labelled_line_announces():
    """A message ending in a colon goes on below it (xFormers lists each kernel's reasons): a
    match on one of those lines is on the labelled message; one past the blank line is not."""
    from errkb.match import Match

    text = ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
            "     query       : shape=(1, 2, 1, 40) (torch.float32)\n"
            "`cutlassF` is not supported because:\n"
            "    device=cpu (supported: {'cuda'})\n"
            "\n"
            "device=cpu (supported: {'cuda'}) printed again\n")
    label = wild.Label("f.txt", "https://github.com/o/r/issues/1", True, text.splitlines()[0], "xformers", "other", "")
    reason = text.index("device=cpu")
    inside = Match("r", "record", 1.0, (reason, reason + 10), text[reason:reason + 10], {}, "device={d} x", [], {})
    assert wild.judge(label, text, [inside], {"r": {"xformers"}}) == "right"
    later = text.rindex("device=cpu")
    outside = Match("r", "record", 1.0, (later, later + 10), text[later:later + 10], {}, "device={d} x", [], {})
    assert wild.judge(label, text, [outside], {"r": {"xformers"}}) == "wrong"
    plain = wild.Label("f.txt", "https://github.com/o/r/issues/1", True, "     query       : shape=(1, 2, 1, 40) (torch.float32)",
                       "xformers", "other", "")
    assert wild.judge(plain, text, [inside], {"r": {"xformers"}}) == "wrong"


def test_the_judge_takes_the_causes_under_a_uv_or_pip_headline():
    """uv prints `× <what failed>` and its causes below it (`├─▶`, `╰─▶`): one error."""
    from errkb.match import Match

    text = ("  × Failed to download and build `flash-attn==2.8.1`\n"
            "  ╰─▶ Build backend failed to determine requirements\n"
            "\n"
            "  ╰─▶ printed again after a blank line\n")
    label = wild.Label("f.txt", "https://github.com/o/r/issues/1", True, text.splitlines()[0], "flash-attn", "other", "")
    cause = text.index("Build backend")
    inside = Match("r", "record", 1.0, (cause, cause + 13), text[cause:cause + 13], {}, "Build backend x", [], {})
    assert wild.judge(label, text, [inside], {"r": {"flash-attn"}}) == "right"
    after = text.index("printed again")
    outside = Match("r", "record", 1.0, (after, after + 7), text[after:after + 7], {}, "printed again x", [], {})
    assert wild.judge(label, text, [outside], {"r": {"flash-attn"}}) == "wrong"


def test_a_thread_served_by_a_mirror_or_proxy_is_named_by_its_github_address():
    """Round 52 (SAMPLING.md) reads GitHub threads from the pages corpus, behind other hosts."""
    gh = "https://github.com/sgl-project/sglang/issues/23657"
    assert wild.github_thread("https://gitlite.zycloud.tk/sgl-project/sglang/issues/23657") == gh
    assert wild.github_thread("https://github.meowingcats01.workers.dev/sgl-project/sglang/issues/23657#issuecomment-1") == gh
    proxied = "https://hdoplus.com/proxy_gol.php?url=https%3A%2F%2Fgithub.com%2Fsgl-project%2Fsglang%2Fissues%2F23657"
    assert wild.github_thread(proxied) == gh
    assert wild.github_thread("https://github.1485827954.workers.dev/sgl-project/sglang/pull/20739") == gh.replace("issues/23657", "pull/20739")
    assert wild.github_thread("https://app.semanticdiff.com/gh/deepspeedai/DeepSpeed/commit/0e0748c") is None
    assert wild.github_thread("https://gitee.com/o/r/issues/12") is None
    assert wild.github_thread("https://www.stepcodex.com/en/issue/bug-vision-encoder-crashes-on-sm100") is None
