"""The matching engine on the real dataset."""

import pytest

from errkb import match, wild
from errkb.match import MatchIndex


def top(index, text):
    hits = index.match(text)
    return hits[0] if hits else None


def frame(path: str, line: int, function: str, source: str = "") -> str:
    """One traceback frame as Python prints it, with the source line under it when given."""
    return f'  File "{path}", line {line}, in {function}\n' + (f"    {source}\n" if source else "")


def test_a_bare_message_finds_its_record(index):
    hit = top(index, "AssertionError: SplitKV not supported on SM 9.0")
    assert hit.kind == "record" and "splitkv" in hit.id
    assert hit.score >= 0.9 and hit.why[0].startswith("exact match")


def test_parameters_are_extracted(index, dataset):
    site = next(s for s in dataset.sites.values()
                if s.template == "FlashAttention forward only supports head dimension at most 256")
    assert site  # a literal message; now one with a placeholder:
    hit = top(index, "ValueError: num_splits=4 is not supported with gather_kv_indices (sparse MLA runs without split-KV)")
    # (the placeholder's name follows the newest release: num_splits to b36, fwd_requested_num_splits in b39+)
    assert hit is not None and list(hit.params.values()) == ["4"] and "num_splits" in next(iter(hit.params))


def test_span_points_into_the_original_paste(index):
    text = "\x1b[31m[rank0]: RuntimeError: FlashAttention only supports Ampere GPUs or newer.\x1b[0m\n"
    hit = top(index, text)
    start, end = hit.span
    assert text[start:end] == "FlashAttention only supports Ampere GPUs or newer."


def test_records_rank_before_bare_sites(index):
    hits = index.match("NotImplementedError: FA4 path does not support non-consecutive batch indices or left padding.")
    assert hits[0].kind == "record"
    assert hits[0].id == "sglang-fa4-kvcache-batch-idx-leftpad"


def test_reworded_message_still_matches_fuzzily(index):
    hit = top(index, "RuntimeError: FlashAttention only supports Ampere GPU or newer")
    assert hit is not None and hit.id == "fa2-ampere-gpu-required"
    assert "fuzzy" in hit.why[0]


def test_unrelated_text_has_no_match(index):
    assert index.match("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB") == []
    assert index.match("hello, this log is fine") == []
    assert index.match("") == []


def test_traceback_frames_break_ties_between_packages(index):
    text = ('  File "/venv/lib/python3.12/site-packages/sglang/kernels/ops/attention/flash_attention_v4.py", line 368\n'
            "NotImplementedError: FA4 path does not support non-consecutive batch indices or left padding.")
    hit = top(index, text)
    assert hit.packages[0] == "sglang"
    assert any("traceback frames point to sglang" in w for w in hit.why)


def test_the_in_order_prefilter_keeps_every_real_match_and_drops_shuffled_words():
    from errkb.candidates import in_order as _in_order
    from errkb.match import Entry

    entry = Entry("head_dim {d} must be divisible by {n} on SM90", "", set(), set(), [], [])
    assert entry.pieces == ("head_dim", "must", "be", "divisible", "by", "on", "SM90")
    # blanks drift (several spaces, a line break) and values sit between the pieces: still kept
    assert _in_order(entry.pieces, "ERROR head_dim 100  must be\ndivisible by 8 on SM90 (rank 0)")
    # every word present but in another order, or a piece missing: dropped before any regex
    assert not _in_order(entry.pieces, "on SM90 head_dim must be divisible by 8")
    assert not _in_order(entry.pieces, "head_dim 100 must be divisible by 8 on SM100")


def test_literal_tokens_keep_case_and_leave_out_tokens_glued_to_values():
    from errkb.match import tokens, whole_text

    assert tokens(whole_text("{name}_proj must be 2D, got {shape}")) == {"must", "be", "2D", "got"}
    assert tokens(whole_text("M must be 64, 128 or 256")) == {"M", "must", "be", "64", "128", "or", "256"}


def test_the_cover_index_opens_every_entry_a_real_instance_matches(index):
    """The token prefilter may drop only what the search pattern would reject anyway: for a
    sample of real templates, rendered with values inside a noisy paste, every entry whose
    pattern matches the paste is among the covered candidates."""
    import random

    from errkb import templates
    from errkb.match import MIN_EXACT_LITERAL
    from errkb.paste import parse

    rng = random.Random(11)
    values = ["128", "torch.bfloat16", "(2, 4096, 32, 128)", "sm90", "cuda:0", "None", "q_proj", "x"]
    usable = [i for i, e in enumerate(index.entries) if len(e.literal) >= MIN_EXACT_LITERAL and e.words]
    checked = 0
    for i in rng.sample(usable, 600):
        entry = index.entries[i]
        message = templates.render(entry.template, {k: rng.choice(values) for k in templates.placeholders(entry.template)})
        paste = parse(f"INFO 11-29 10:23:39 [runner.py:12] warming up\n[rank1]: ValueError: {message}\n")
        if entry.finder.search(paste.text):
            checked += 1
            assert i in index.exact_candidates.find(paste.message_text, paste.text), entry.template
    assert checked > 500  # the sample really exercised the prefilter


def test_a_message_retyped_in_another_case_still_finds_its_record(index):
    pasted = ("valueerror: bfloat16 is only supported on gpus with compute capability of at least 8.0. "
              "your tesla v100-sxm2-32gb gpu has compute capability 7.0.")
    assert top(index, pasted[:12] + pasted[12:].capitalize()) is not None  # sanity: the wording is known
    hit = top(index, pasted)
    assert hit is not None and hit.id == "vllm-bf16-requires-sm80"
    assert hit.params["gpu_name"] == "tesla v100-sxm2-32gb" and "ignoring letter case" in hit.why[0]
    assert hit.score < 1.0  # less sure than the same text in its own case


def test_ignoring_case_is_a_last_resort(index):
    # The right case matched exactly: the caseless pass never runs, so its why never shows.
    hit = top(index, "AssertionError: SplitKV not supported on SM 9.0")
    assert "ignoring letter case" not in " ".join(hit.why)
    # Short messages do not match in another case: too likely to be ordinary prose.
    assert top(index, "RuntimeError: batch size must be positive").id == "fa2-batch-size-not-positive"
    assert top(index, "RUNTIMEERROR: BATCH SIZE MUST BE POSITIVE") is None


def test_evidence_names_the_library_and_the_generic_record_answers_without_it(dataset, data_dir):
    from errkb.dataset import Dataset
    from errkb.model import Evidence

    message = "zq kernel image zq is not here for this device"
    generic = dataset.records[0].model_copy(update={
        "id": "zz-generic", "template": message, "message": message, "sites": [], "related": [],
        "origin": "made up for this test", "evidence": []})
    specific = generic.model_copy(update={
        "id": "zz-library", "evidence": [Evidence(contains="flash_attn_2_cuda", package="flash-attn")]})
    index = MatchIndex(Dataset.load(data_dir, records=[*dataset.records, specific, generic]))

    plain = index.match(f"RuntimeError: {message}")
    assert [m.id for m in plain] == ["zz-generic"]  # without evidence the library record stays out

    traced = index.match(f'  File "/x/flash_attn/flash_attn_interface.py", line 1, in f\n'
                         f"    flash_attn_2_cuda.fwd(q)\nRuntimeError: {message}")
    assert [m.id for m in traced] == ["zz-library", "zz-generic"]
    assert "the paste names flash_attn_2_cuda (flash-attn)" in traced[0].why
    assert not any("names" in why for why in traced[1].why)


def test_a_site_repeating_pythons_own_message_needs_frames_in_its_package(index):
    # flash-attn-4's module __getattr__ raises Python's "module ... has no attribute ..." text
    text = "AttributeError: module 'comfy_kitchen' has no attribute 'int8_attention_is_available'"
    assert index.match(text) == []
    traced = (frame("/venv/lib/python3.12/site-packages/flash_attn/cute/flash_fwd.py", 1249, "__getattr__")
              + "AttributeError: module 'flash_attn.cute.flash_fwd' has no attribute 'FlashFwdSm200'")
    hit = top(index, traced)
    assert hit is not None and hit.id.startswith("flash-attn-4:") and "traceback frames point to" in " ".join(hit.why)


def test_a_site_of_two_words_needs_frames_in_its_package(index):
    # a harvested FlashInfer site reads just "internal error": in another engine's log (here a
    # Rust one's) those two words are not FlashInfer's
    assert index.match("Error: internal error 'F8E4M3 not supported in CUDA backend'") == []
    short = [e for e in index.entries if not e.record_ids and len(match.words(e.literal)) < 3]
    assert short and all(e.says_little for e in short if not match._NUMBERED.search(e.literal))
    # versions and archs pin a message down as words do: FA4's "Only SM 10.x and 11.x are
    # supported" (two words of three letters) answers without a frame in flash_attn/cute
    numbered = next(e for e in short if e.literal == "Only SM 10.x and 11.x are supported")
    assert not numbered.says_little
    assert top(index, "AssertionError: Only SM 10.x and 11.x are supported\n") is not None
    long = next(e for e in index.entries if not e.record_ids and len(match.words(e.literal)) >= 6)
    assert not long.says_little


def test_a_line_with_a_few_words_of_a_long_message_is_not_that_message(index):
    # a CMake log line shares "file" and "directory" with transformers' "Error no file named ...
    # found in directory ..." (mostly placeholders): fuzzy scorers rate such scraps high
    scrap = (wild.WILD_DIR / "pastes" / "vllm-project__vllm__issues__7785.txt").read_text()  # a dev paste
    assert "         no such file or directory\n" in scrap and index.match(scrap) == []
    wrapped = ("Error: Invalid configuration : NUM_MMA_Q=2 NUM_MMA_D_QK=2 NUM_MMA_D_VO=2 NUM_MMA_KV=4 NUM_WARPS_Q=4 \n"
               "NUM_WARPS_KV=1 please create an issue (https://github.com/flashinfer-ai/flashinfer/issues) and report"
               " the issue to the developers.\n")
    hit = top(index, wrapped)
    assert hit is not None and hit.id == "flashinfer-prefill-invalid-mma-configuration"


def test_a_wrappers_record_follows_the_record_of_the_cause_it_prints(index):
    # sgl_kernel's loader headline scores higher (a longer exact message) than the ABI mismatch it
    # lists below it; the headline's record declares wraps_cause, so the cause answers first
    text = ("ImportError: \n[sgl_kernel] CRITICAL: Could not load any common_ops library!\n"
            "Error details from previous import attempts:\n- ImportError: /usr/lib/python3.10/dist-packages/"
            "sgl_kernel/sm100/common_ops.abi3.so: undefined symbol: _ZNK3c106SymInt6sym_neERKS0_\n")
    got = [m.id for m in index.match(text)]
    assert "sgl-kernel-common-ops-load-failed" in index.wrappers
    assert got[0] == "sgl-kernel-undefined-symbol-torch-abi" and "sgl-kernel-common-ops-load-failed" in got[1:]
    alone = "ImportError: \n[sgl_kernel] CRITICAL: Could not load any common_ops library!\n"
    assert top(index, alone).id == "sgl-kernel-common-ops-load-failed"


def test_an_advisory_warning_follows_another_record_in_the_paste(index):
    # transformers 4.49-4.52 print the Qwen sliding-window notice at every start with SDPA or eager;
    # the record is advisory, so a broken xFormers install logged beside it answers first
    advisory = "Sliding Window Attention is enabled but not implemented for `eager`; unexpected results may be encountered.\n"
    broken = ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
              "    PyTorch 2.5.1 with CUDA 1201 (you have 2.6.0+cu124)\n")
    assert "transformers-sliding-window-not-implemented-warning" in index.wrappers
    got = [m.id for m in index.match(broken + advisory)]
    assert got[0] == "xformers-cpp-extensions-unavailable"
    assert "transformers-sliding-window-not-implemented-warning" in got[1:]
    assert top(index, advisory).id == "transformers-sliding-window-not-implemented-warning"


def test_an_info_line_explains_a_paste_with_no_error_line(index):
    info = "INFO 05-10 12:00:00 selector.py:217] Cannot use FlashAttention-2 backend for Volta and Turing GPUs.\n"
    hit = top(index, "INFO 05-10 12:00:00 llm_engine.py:100] Initializing an LLM engine\n" + info)
    assert hit.id == "vllm-fa2-skipped-pre-ampere" and "found on an INFO line" in " ".join(hit.why)
    error = "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n"
    assert top(index, info + error).id != "vllm-fa2-skipped-pre-ampere"  # an error line speaks first


@pytest.mark.parametrize("text", [
    "运行时报错RuntimeError:FlashAttention only supports Ampere GPUs or newer.怎么办",
    "エラー：RuntimeError: FlashAttention only supports Ampere GPUs or newer.出现这个问题",
    "训练时出现 FlashAttention only supports Ampere GPUs or newer。",  # a full-width stop
])
def test_prose_in_another_language_around_the_message_does_not_hide_it(index, text):
    assert top(index, text).id == "fa2-ampere-gpu-required"


def test_a_paste_cut_inside_the_message_matches_its_start_when_the_frames_agree(index):
    frames = ('  File "/usr/lib/python3.12/site-packages/flash_attn/flash_attn_interface.py", line 90, in fwd\n'
              "    out = flash_attn_gpu.fwd(q, k, v)\n")
    cut = "RuntimeError: FlashAttention forward only supports head dimen"
    hit = top(index, frames + cut)
    assert hit.id == "fa2-headdim-over-256" and "ends inside this message" in hit.why[0]
    assert index.match(cut) == []  # without frames to agree, a cut line is too little to go on


def test_a_cut_message_under_a_call_into_an_extension_is_that_functions_check(index):
    # log prefixes took the indent; the frame's line calls flash-attn's compiled varlen_fwd,
    # whose C++ function (mha_varlen_fwd) raises "Paged KV cache block size must be ..."
    text = ('File "/usr/lib/python3.12/dist-packages/flash_attn/flash_attn_interface.py", line 170, '
            "in _flash_attn_varlen_forward\n"
            "out, softmax_lse, S_dmask, rng_state = flash_attn_gpu.varlen_fwd(\n"
            "RuntimeError: Paged KV cache")
    hit = top(index, text)
    assert hit.id == "fa2-paged-kv-block-size" and "called as flash_attn_gpu.varlen_fwd(" in hit.why[0]
    assert index.match(text.replace("varlen_fwd(", "other_fwd(")) == []


def test_a_cut_line_of_a_record_that_needs_evidence_answers_when_the_paste_holds_it(index):
    under_xformers = frame("/venv/lib/python3.12/site-packages/xformers/ops/fmha/flash.py", 116, "_flash_fwd",
                           ") = torch.ops.aten._flash_attention_forward(")
    cut = "RuntimeError: CUDA error: invalid configu"
    hit = top(index, under_xformers + cut)
    assert hit.id == "xformers-batch-over-65535-invalid-configuration"
    assert "ends inside this message" in hit.why[0] and "xformers" in hit.why[-1]
    under_torch_only = frame("/venv/lib/python3.12/site-packages/torch/_ops.py", 1123, "__call__")
    assert index.match(under_torch_only + cut) == []


def test_a_message_cut_after_a_few_characters_is_named_by_the_frame_that_raises_it(index):
    site_packages = "/usr/local/lib/python3.10/dist-packages/transformers/modeling_utils.py"
    frames = (frame(site_packages, 1454, "_autoset_attn_implementation", "cls._check_and_enable_flash_attn_2(")
              + frame(site_packages, 1551, "_check_and_enable_flash_attn_2", "raise ImportError("))
    hit = top(index, frames + "ImportError: Fla")
    assert "you need flash_attn package version" in hit.template
    assert "3 characters into this message" in hit.why[0] and "_check_and_enable_flash_attn_2" in hit.why[0]
    assert hit.matched_text == "ImportError: Fla"
    # each part must agree: the class, the function, the file and the characters left
    assert index.match(frames + "TypeError: Fla") == []
    assert index.match(frames.replace("in _check_and_enable", "in _other_check") + "ImportError: Fla") == []
    assert index.match(frames.replace("transformers/modeling_utils.py", "mypkg/utils.py") + "ImportError: Fla") == []
    assert index.match("ImportError: Fla") == []  # no frame, nothing to go on
    outer = frame(site_packages, 1454, "_autoset_attn_implementation", "raise ValueError(")
    assert "attn_implementation" in top(index, outer + "ValueError: Spec").template
    assert index.match(outer + "ValueError: Xyz") == []  # no message raised there begins so


def test_a_paste_that_begins_inside_a_message_matches_its_end_when_one_library_prints_it(index):
    # ComfyUI-WanVideoWrapper#173: the user copied the exception line from the middle of a word
    comfy = frame("/usr/local/ComfyUI/custom_nodes/ComfyUI-WanVideoWrapper/wanvideo/wan_video_vae.py", 785, "decode",
                  "video = self.tiled_decode(hidden_state, device, tile_size, tile_stride)")
    text = "mension at most 256\nTraceback (most recent call last):\n" + comfy
    hit = top(index, text)
    assert hit.id == "fa2-headdim-over-256" and "begins inside this message" in hit.why[0]
    assert hit.matched_text == "mension at most 256"
    assert index.match(text.replace("mension", "dimension")) == []  # a whole word: not a cut
    assert index.match(text.replace("at most", "at least")) == []  # the rest must be the message's, word for word
    assert index.match("Some text\n" + text) == []  # only the paste's first line can begin mid-message
    assert index.match("mension 256\n") == []  # too few words to go on
    # a tail that messages of several packages end with names none of them (FA4 and SGLang's vendored copy)
    shared = [e for e in index.entries if e.literal.endswith("supported on SM8x architectures.")]
    assert len({p for e in shared for p in e.packages}) > 1
    assert index.match("ported on SM8x architectures.\n") == []


def test_the_printed_message_wins_over_the_raise_line_a_traceback_shows(index):
    text = ('Traceback (most recent call last):\n'
            '  File "/usr/lib/python3.10/site-packages/vllm/worker/worker.py", line 300, in _check_if_gpu_supports_dtype\n'
            '    "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. '
            'Your {gpu_name} GPU has compute capability {cc}.")\n'
            "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
            "Your Tesla T4 GPU has compute capability 7.5.\n")
    hit = top(index, text)
    assert hit.id == "vllm-bf16-requires-sm80"
    assert hit.matched_text.startswith("Bfloat16") and hit.params["gpu_name"] == "Tesla T4"


def test_a_notebook_traceback_answers_with_the_printed_message_not_its_source_line(index):
    """IPython/Colab tracebacks print the raising f-string; the paste scanner sees no frames."""
    text = ("[/usr/local/lib/python3.8/dist-packages/xformers/ops.py](https://localhost:8080/#) in no_such_operator(*args, **kwargs)\n"
            "     45     def no_such_operator(*args, **kwargs):\n"
            "---> 46         raise RuntimeError(\n"
            '     47             f"No such operator xformers::{name} - did you forget to build xformers with '
            '`python setup.py develop`?"\n\n'
            "RuntimeError: No such operator xformers::efficient_attention_forward_cutlass - did you forget "
            "to build xformers with `python setup.py develop`?\n")
    hit = top(index, text)
    assert hit.id == "xformers-no-such-operator" and hit.params == {"name": "efficient_attention_forward_cutlass"}


def test_pythons_own_constructor_wording_says_little(index):
    # Triton's language/core.py re-raises Python's own "X.__init__() takes N positional arguments
    # but M were given" for its dataclasses; any class's constructor says the same
    for text in ("TypeError: HPUMoEMethod.__init__() takes 3 positional arguments but 4 were given",
                 "TypeError: VisionBlock.__init__() got an unexpected keyword argument 'use_upstream_fa'"):
        assert index.match(text) == []
    entries = [e for e in index.entries if "__init__()" in e.template and not e.record_ids and "triton" in e.packages
               and ("positional arguments" in e.template or "unexpected keyword" in e.template)]
    assert len(entries) >= 2 and all(e.says_little for e in entries)
    # a named method is not Python's wording: FlashInfer's "paged_k_cache.value() must be ..." stays
    assert not match.MatchIndex._entry("{x}.plan_info() takes no keyword arguments here", [], []).says_little


def test_ipythons_source_listing_is_not_the_error(index):
    # a notebook traceback cut off before its exception line lists the raise with line numbers:
    # the message there is source code, not an error that happened
    listing = ("File ~/envs/x/lib/python3.10/site-packages/vllm/attention/backends/xformers.py:422, in XFormersImpl.__init__(self)\n"
               "    420 if logits_soft_cap is not None:\n"
               "--> 422     raise ValueError(\n"
               '    423         "XFormers does not support attention logits soft capping.")\n'
               "    424 self.num_heads = num_heads\n")
    assert index.match(listing) == []
    printed = listing + "\nValueError: XFormers does not support attention logits soft capping.\n"
    hit = top(index, printed)
    assert hit is not None and hit.id.startswith("vllm:") and hit.span[0] > len(listing)
    # without an arrow line, a line that starts with a number is ordinary text
    assert top(index, '    423 "XFormers does not support attention logits soft capping."') is not None


def test_a_notice_answers_only_through_its_own_record_and_the_error_it_caught_not_at_all(index):
    # xformers warns at import that Triton is missing and carries on: its own (advisory) record
    # answers, saying so; the ImportError it prints as caught is part of that notice; and SGLang's
    # "... can be ignored", which has no record, says so itself
    notice = ("WARNING:xformers:A matching Triton is not available, some optimizations will not be enabled.\n"
              "Error caught was: No module named 'triton'\n")
    assert [m.id for m in index.match(notice)] == ["xformers-matching-triton-not-available"]
    bare = "WARNING:xformers:A matching Triton is not available, some optimizations will not be enabled."
    assert [m.id for m in index.match(bare)] == ["xformers-matching-triton-not-available"]
    assert index.match("[2025-06-27 18:51:41] The following error message 'operation scheduled before its operands'"
                       " can be ignored.") == []
    # the same error not caught by a notice answers (here with the xformers frame its record asks for)
    raised = (frame("/venv/lib/python3.10/site-packages/xformers/ops/fmha/triton_splitk.py", 5, "<module>")
              + "ModuleNotFoundError: No module named 'triton'\n")
    assert top(index, raised).id == "triton-module-not-found"
    assert index.match(raised.replace("ModuleNotFoundError", notice + "ModuleNotFoundError")) != []
    notices = [e for e in index.entries if e.notice]
    assert notices and all(s.kind in match.WARNING_KINDS for e in notices for s in e.sites)
    # a warning that reports a failure is not a notice: vLLM's failed import of its _C extension
    failed = ("WARNING 06-13 11:42:20 _custom_ops.py:11] Failed to import from vllm._C with ImportError('/usr/lib/"
              "vllm/_C.abi3.so: undefined symbol: _ZN5torch7LibraryC1ENS0_4KindESsSt8optionalIN3c1011DispatchKeyEEPKcj')")
    assert top(index, failed) is not None


def test_a_record_with_failing_file_stays_out_of_another_librarys_extension(index):
    # torch-extension-undefined-symbol explains attention libraries' extensions built against
    # another torch; a line naming some other extension (or torch's own libraries) is not its
    symbol = "undefined symbol: _ZN2at19UndefinedTensorImpl10_singletonE"
    others = ["ImportError: /usr/lib/python3.6/site-packages/nv_wavenet_ext.cpython-36m-x86_64-linux-gnu.so: ",
              "ImportError: anaconda2/lib/python2.7/site-packages/torch/lib/libtorch.so.1: "]
    for line in others:
        assert "torch-extension-undefined-symbol" not in [m.id for m in index.match(line + symbol)]
    got = index.match("ImportError: /usr/local/lib/python3.10/dist-packages/vllm/_C.cpython-310-x86_64-linux-gnu.so: " + symbol)
    # vLLM's own record answers first (it is about one library); the generic one follows, saying whose file failed
    assert got[0].id == "vllm-undefined-symbol-torch-abi"
    ours = next(m for m in got if m.id == "torch-extension-undefined-symbol")
    assert "the file that failed is vllm's (vllm)" in ours.why
    assert top(index, symbol).id == "torch-extension-undefined-symbol"  # no file named: answered as before
    quoted = "WARNING x] Failed to import from vllm._core_C with ImportError('/opt/x/vllm/_core_C.abi3.so: undefined"
    assert match._file_named_before(quoted, quoted.index("undefined")) == "ImportError('/opt/x/vllm/_core_C.abi3.so"
    # the folders above site-packages are the user's: an environment named vllm holds LMCache here
    lmcache = "ImportError: /opt/vllm/lib64/python3.12/site-packages/lmcache/c_ops.cpython-312-x86_64-linux-gnu.so: "
    assert "torch-extension-undefined-symbol" not in [m.id for m in index.match(lmcache + symbol)]
    assert match._file_named_before(lmcache + symbol, len(lmcache)) == "lmcache/c_ops.cpython-312-x86_64-linux-gnu.so"


def test_python_s_own_wording_with_a_type_written_in_needs_the_site_s_package_in_the_frames(index):
    # Triton's tuple class raises "'tuple' object has no attribute ..." in Python's own words:
    # under a model's attention code without Triton frames it is Python's error, not Triton's
    # (shrimai/Focused-Attention-Improves-Document-Grounded-Generation#3)
    error = "AttributeError: 'tuple' object has no attribute 'unsqueeze'\n"
    user = frame("/home/u/project/models/attention.py", 88, "forward", "attn = self.attention(q, k).unsqueeze(1)")
    assert "triton:24fc1efb8a77" not in [m.id for m in index.match("Traceback (most recent call last):\n" + user + error)]
    assert match._skeleton("'tuple' object has no attribute ") == "object has no attribute"


def test_python_s_own_wording_is_a_bare_site_s_only_under_a_frame_in_its_file(index):
    # torch's cpp_extension.py raises "module ... has no attribute ..." in Python's own words; a
    # traceback through other torch files (flash-linear-attention#668: torch.cpu has no `device`)
    # is Python's error there, not the extension builder's
    error = "AttributeError: module 'torch.cpu' has no attribute 'device'. Did you mean: '_device'?\n"
    tb = ("Traceback (most recent call last):\n"
          + frame("/venv/lib/python3.11/site-packages/fla/ops/attn/parallel.py", 40, "attn_fwd", "with torch.cpu.device(x.device):")
          + frame("/venv/lib/python3.11/site-packages/torch/__init__.py", 2562, "__getattr__"))
    assert "torch:f8d2c4c7a03a" not in [m.id for m in index.match(tb + error)]
    own = tb + frame("/venv/lib/python3.11/site-packages/torch/utils/cpp_extension.py", 2000, "load")
    assert "torch:f8d2c4c7a03a" in [m.id for m in index.match(own + error)]


def test_a_bare_warning_that_names_nothing_of_attention_stays_quiet(index):
    # vLLM's platform files are harvested whole for their backend checks; their other warnings
    # (a deprecated pynvml, the device order) say nothing about attention (vllm#10569, #28572),
    # while a failed import of vLLM's compiled kernels (vllm._C) still answers
    for line in ("WARNING 11-20 10:11:12 cuda.py:32] You are using a deprecated `pynvml` package. Please install "
                 "`nvidia-ml-py` instead, and make sure to uninstall `pynvml`.",
                 "WARNING 11-20 10:11:12 cuda.py:96] Detected different devices in the system: NVIDIA A100, NVIDIA "
                 "T4. Please make sure to set `CUDA_DEVICE_ORDER=PCI_BUS_ID` to avoid unexpected behavior."):
        assert index.match(line) == [], line
    failed = ("WARNING 08-27 13:59:59 _custom_ops.py:15] Failed to import from vllm._C with ImportError("
              "'libcudart.so.12: cannot open shared object file: No such file or directory')")
    assert index.match(failed)


def test_the_traceback_a_notice_logs_under_itself_is_part_of_the_notice(index):
    # xFormers 0.0.24+ logs its Triton notice with exc_info: the ModuleNotFoundError below it is
    # what the notice caught, not an error of the run (YanWenKun/Hunyuan3D-2-WinPortable#60)
    notice = ("A matching Triton is not available, some optimizations will not be enabled\n"
              "Traceback (most recent call last):\n"
              + frame("X:/python/Lib/site-packages/xformers/__init__.py", 57, "_is_triton_available", "import triton  # noqa")
              + "ModuleNotFoundError: No module named 'triton'\n")
    assert [m.id for m in index.match(notice)] == ["xformers-matching-triton-not-available"]
    raised = notice + "Traceback (most recent call last):\n" + frame("/x/app.py", 3, "<module>", "import triton") \
        + "ModuleNotFoundError: No module named 'triton'\n"
    assert top(index, raised).id == "triton-module-not-found"  # raised again for real below it: that one answers first


def test_a_bare_triton_site_needs_attention_code_in_the_paste(index):
    # Triton raises its compile errors for any kernel: with no attention code in sight the paste
    # is a Triton question; the same error under an attention kernel's frames gets Triton's site
    error = ("RuntimeError: Internal Triton PTX codegen error: \n"
             "ptxas /tmp/fileTRGV2e, line 70; fatal   : Parsing error near ':': syntax error\n")
    assert index.match(error) == []
    traced = frame("/venv/lib/python3.10/site-packages/vllm/attention/ops/prefix_prefill.py", 800, "context_attention_fwd") + error
    hit = top(index, traced)
    assert hit is not None and hit.id.startswith("triton:")
    # SGLang's model runner is harvested whole; its model registry error is not an attention one
    arch = ("ValueError: Unsupported architectures: Phi3ForCausalLM. Supported list: ['CohereForCausalLM', "
            "'LlamaForCausalLM']")
    assert index.match(arch) == []
    # vLLM's worker.py is harvested for its dtype check; its KV-cache capacity error is about memory
    kv = ("ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be "
          "stored in KV cache (1216). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` "
          "when initializing the engine.")
    assert index.match(kv) == []
    assert any(e.shared for e in index.entries if "triton" in e.packages)


def test_a_fuzzy_match_keeps_the_name_of_the_function(index):
    # FlashInfer's "plan() missing required arguments: ..." is close, word for word, to Python's
    # message about any other function; rewording keeps the function's name, so another's is not it
    assert index.match("TypeError: _attn_flops_compute() missing 3 required positional arguments: 'q', 'k', and 'v'") == []
    entry = next(e for e in index.entries if e.template.startswith("plan() missing required arguments"))
    assert entry.callees == {"plan"}
    assert index._fuzzy([entry], [(0, "TypeError: plan() missing 2 required arguments: 'q', 'k'")])
    assert not index._fuzzy([entry], [(0, "TypeError: _attn_flops_compute() missing 3 required arguments: 'q', 'k'")])


def test_a_missing_triton_answers_only_with_attention_code_in_sight(index):
    # ComfyUI's backend listing quotes "No module named 'triton'" for a kitchen backend; with no
    # attention library needing Triton in the paste, it is not an attention-backend error
    listing = ("Found comfy_kitchen backend triton: {'available': False, 'unavailable_reason': "
               "\"ImportError: No module named 'triton'\"}\nUsing pytorch attention\n")
    assert index.match(listing) == []
    traced = (frame("/venv/lib/python3.11/site-packages/flash_attn/ops/triton/rotary.py", 6, "<module>", "import triton")
              + "ModuleNotFoundError: No module named 'triton'\n")
    assert top(index, traced).id == "triton-module-not-found"


def test_a_raise_the_paste_shows_tells_which_message_it_is(index):
    # a traceback (its frame without a line number, so unknown to the scanner) shows SGLang's own
    # f-string; FlashInfer's site shares the words but not the values, so it did not raise this
    text = ('  File "/x/site-packages/sglang/srt/multiplex/pdmux_context.py", in get_arch_constraints\n'
            '    raise ValueError(f"Unsupported compute capability: {major}.{minor}")\n'
            "ValueError: Unsupported compute capability: 12.0\n")
    assert index.match(text) == []
    assert top(index, text.splitlines()[-1]).id.startswith("flashinfer-python:")  # the bare line: as before
    # the same raise as the record's own template still finds the record (on the printed line)
    own = ('    raise ImportError(f"{preface} the package flash_attn seems to be not installed. {install_message}")\n'
           "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the "
           "package flash_attn seems to be not installed. Please refer to the documentation.\n")
    hit = top(index, own)
    assert hit.id == "transformers-flash-attn-not-installed" and hit.span[0] > own.index("\n")


def test_a_value_printed_in_braces_is_not_a_raise(index):
    # torch prints a tensor's type and shape as `CUDABFloat16Type{[1, 1, 1538, ...]}`: braces round
    # a printed value, not an f-string field, so the message is matched as printed
    text = (frame("/x/site-packages/transformers/integrations/sdpa_attention.py", 66, "sdpa_attention_forward",
                  "attn_output = torch.nn.functional.scaled_dot_product_attention(")
            + "RuntimeError: expand(CUDABFloat16Type{[1, 1, 1538, 1538, 1538]}, size=[1, 24, 1538, 1538]): the number "
            "of sizes provided (4) must be greater or equal to the number of dimensions in the tensor (5)\n")
    assert top(index, text).id == "sdpa-attn-mask-too-many-dims"


def test_a_record_outranks_a_bare_site_at_the_same_score(index):
    # both messages match exactly (scores capped at 1.0); the bare site's text is longer, but a
    # curated record answers before a bare site, as the docs promise
    text = ("x.py:71: UserWarning: Memory efficient kernel not used because: (Triggered internally at sdp_utils.cpp:778.)\n"
            "x.py:71: UserWarning: Memory Efficient attention has been runtime disabled. (Triggered internally at "
            "sdp_utils_cpp.h:551.)\n")
    got = index.match(text)
    assert got[0].kind == "record" and got[0].id == "sdpa-mem-efficient-kernel-not-used"
    assert any(m.kind == "site" for m in got[1:])


def test_remote_code_that_needs_flash_attn_is_told_apart_from_other_missing_packages(index):
    # transformers' check_imports lists every package a remote modeling file imports and lacks;
    # the record answers when flash_attn is among them, not for any missing package
    line = ("ImportError: This modeling file requires the following packages that were not found in your "
            "environment: {0}. Run `pip install {1}`")
    assert top(index, line.format("flash_attn, einops", "flash_attn einops")).id == "transformers-remote-code-requires-flash-attn"
    assert index.match(line.format("einops", "einops")) == []


def test_fixed_wording_quoting_another_name_is_not_a_fuzzy_match(index):
    """Python's import wording never drifts: the quoted name is the message, so `No module named
    'torch'` (torch missing in a build's isolated environment) is not `... 'torch.nn.attention'`."""
    assert index.match("no module named 'torch'\".") == []
    assert index.match("ModuleNotFoundError: No module named 'torch'") == []
    got = top(index, "ModuleNotFoundError: No module named 'torch.nn.attention'")
    assert got is not None and got.id == "torch-nn-attention-module-not-found"
    # the same for TORCH_CHECK's and Python's fixed wording around a condition or a variable
    # (names no record has: the exact `attn_bias.stride(1) == 0` and `'load_Q'` lines have records of their own)
    assert index.match("RuntimeError: Expected attn_bias.stride(0) == 1 to be true, but got false.") == []
    assert index.match("UnboundLocalError: cannot access local variable 'load_K' where it is not associated with a value") == []


def test_of_two_records_naming_evidence_the_one_about_fewer_packages_goes_first(index):
    """The generic CUDA arch records list every attention library as evidence; FA2's own names
    only flash-attn, so it answers first where both match. Without any of that evidence (llama.cpp's
    ggml kernels), neither answers."""
    frames = frame("/x/site-packages/flash_attn/flash_attn_interface.py", 1, "f", "out = flash_attn_2_cuda.fwd(q)")
    for message, own in (("no kernel image is available for execution on the device", "fa2-no-kernel-image"),
                         ("device kernel image is invalid", "fa2-device-kernel-image-invalid")):
        got = [m.id for m in index.match(frames + "RuntimeError: CUDA error: " + message, limit=3)]
        assert got[0] == own and got[1].startswith("cuda-"), got
    ggml = ("CUDA error: device kernel image is invalid\n"
            "  current device: 0, in function ggml_cuda_mul_mat_q at ggml/src/ggml-cuda/mmq.cu:129\n")
    assert index.match(ggml) == []


def test_a_message_without_its_reason_answers_with_the_generic_record(index):
    # vLLM's refusal pasted up to the end of its first sentence: every record about one reason
    # needs that reason in the paste; the generic record answers (found through its words, not
    # the "Reason" the paste lacks)
    hit = top(index, "ValueError: Selected backend AttentionBackendEnum.FLASHINFER is not valid for this configuration.")
    assert hit.id == "vllm-selected-backend-not-valid" and "fuzzy" in hit.why[0]
    full = top(index, "ValueError: Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this configuration. "
                      "Reason: ['head_size not supported']")
    assert full.id == "vllm-selected-backend-head-size"


def test_a_fuzzy_match_keeps_the_names_its_message_spells_in_capitals(index):
    # vLLM's "Unsupported input data type of MLA ..." is close in words to a JAX/TPU error
    jax = ("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: "
           "Unsupported input data type in matrix multiplication.")
    assert index.match(jax) == []


def test_a_record_matched_twice_points_at_its_first_error(index):
    # FA1's backward check, printed once by 0.2.x and again in its later wording: the first is
    # where the run failed (the second is a retry), whichever template is longer
    text = ("RuntimeError: Expected is_sm80 to be true, but got false.\n"
            "RuntimeError: Expected is_sm80 || is_sm90 to be true, but got false.\n")
    hit = top(index, text)
    assert hit.id == "fa1-backward-is-sm80-check" and hit.span[1] <= text.index("\n")


def test_of_two_wrappers_the_one_printed_first_answers(index):
    # torch's extension-build error inside pip's box, pip's summary after it: both only wrap the
    # compiler's error (not in this paste); the inner one says more
    text = ("      RuntimeError: Error compiling objects for extension\n"
            "      [end of output]\n"
            "  ERROR: Failed building wheel for flash-attn\n"
            "ERROR: Failed to build installable wheels for some pyproject.toml based projects (flash-attn)\n")
    got = index.match(text, limit=2)
    assert [m.id for m in got] == ["flash-attn-build-extension-compile-failed", "flash-attn-pip-installable-wheels-failed"]


def test_a_loosely_reworded_message_is_no_bare_site_without_its_package_in_the_frames(index):
    # SageAttention's own dtype warning is close in words to a FlashInfer check, but no more
    sage = ("Error running sage attention: Input tensors must be in dtype of torch.float16 or torch.bfloat16, "
            "using pytorch attention instead.")
    assert index.match(sage) == []
    under = frame("/venv/lib/python3.12/site-packages/flashinfer/nvfp4_attention_sm120.py", 80, "_preprocess_qkv")
    assert top(index, under + "ValueError: " + sage[len("Error running sage attention: "):]).kind == "site"


def test_a_bare_line_of_records_that_need_evidence_offers_them_as_withheld(index):
    """No match (such a line is more often another CUDA project's), but the records that hold
    it are offered with the words that would let them answer, the generic one first."""
    from errkb.paste import parse

    bare = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    assert index.match(bare) == []
    withheld = dict(index.withheld(parse(bare)))
    assert next(iter(withheld)) == "cuda-no-kernel-image"
    assert "fa2-no-kernel-image" in withheld and "flash_attn_2_cuda" in {e.contains for e in withheld["fa2-no-kernel-image"]}
    named = bare + "\n  File \"/venv/lib/python3.12/site-packages/flash_attn/flash_attn_interface.py\", line 90, in _flash_attn_forward"
    assert index.match(named)[0].id == "fa2-no-kernel-image"  # with the library named it is a match
    assert index.withheld(parse("all good here, nothing failed")) == []


def test_a_cuda_error_naming_another_librarys_kernel_file_is_not_an_attention_records(index):
    """`(at ...\\gemv_awq.cu:313)` on the message's own line says which kernel failed: a
    quantization kernel, so `xformers` elsewhere in the paste (a version banner) does not make
    it xFormers' error. An attention library's file on that line still answers."""
    banner = "\nxformers version: 0.0.29.post3\n"
    other = "CUDA error: no kernel image is available for execution on the device (at D:\\Project\\src\\kernels\\awq\\gemv_awq.cu:313)"
    assert index.match(other + banner) == []
    flash = "CUDA error: no kernel image is available for execution on the device (at D:\\Project\\src\\kernels\\flash_fwd_hdim128.cu:313)"
    assert index.match(flash + banner)
    assert top(index, "CUDA error: no kernel image is available for execution on the device" + banner).id == "xformers-no-kernel-image"


def test_a_catch_all_answers_only_where_no_specific_record_does(index):
    """`cannot import name` from an attention library's module: the catch-all record answers a
    name no record knows, a specific record answers its own name before it (though the catch-all
    names its evidence and the specific one names none), and other modules get nothing."""
    new_name = "ImportError: cannot import name '_flash_attention_new_helper' from 'transformers.modeling_flash_attention_utils' (/x/y.py)"
    assert top(index, new_name).id == "attention-module-cannot-import-name"
    known = "ImportError: cannot import name 'flash_attn_unpadded_qkvpacked_func' from 'flash_attn.flash_attn_interface' (/x/y.py)"
    got = [m.id for m in index.match(known)]
    assert got[0] == "fa1-unpadded-func-import-on-fa2" and "attention-module-cannot-import-name" in got
    assert index.match("ImportError: cannot import name 'PeftConfig' from 'peft.utils' (/x/peft/utils/__init__.py)") == []


def test_a_bare_assertion_error_is_read_by_the_assert_statement_above_it(index):
    """`assert cond` prints no message: the frame's source line is what failed."""
    frame = 'File "wan/modules/attention.py", line 112, in flash_attention\n    assert FLASH_ATTN_2_AVAILABLE\n'
    hit = top(index, frame + "AssertionError\n")
    assert hit is not None and hit.id == "wan-flash-attention-fa2-unavailable-assert"
    assert "bare AssertionError" in " ".join(hit.why)
    # with a message of its own the exception line is the message, and this one names nothing known
    assert index.match(frame + "AssertionError: shapes differ\n") == []


def test_vllm_platform_warnings_need_attention_in_the_paste(index):
    """vllm/platforms/interface.py is harvested for its backend checks but also warns about
    pinned memory under WSL: alone, that start-up line is no attention error."""
    line = "(VllmWorkerProcess pid=1866) WARNING 07-04 22:49:33 utils.py:541] Using 'pin_memory=False' as WSL is detected. This may slow down the performance.\n"
    assert index.match(line) == []
    refusal = "ValueError: The attention backends share no supported KV cache block size (FLASH_ATTN, FLASHINFER).\n"
    assert index.match(refusal), "a check of the same file about attention still answers"


def test_torch_extension_builder_checks_answer_only_about_attention_builds(index):
    """torch/utils/cpp_extension.py is harvested for the checks users meet building flash-attn or
    xformers; it builds every extension, so its sites need attention in the paste, and its warnings
    (ninja missing, no arch list) never answer alone."""
    mismatch = ("RuntimeError:\n      The detected CUDA version (13.1) mismatches the version that was used to compile\n"
                "      PyTorch (12.1). Please make sure to use the same CUDA versions.\n")
    hit = top(index, mismatch + "  ERROR: Failed building wheel for xformers\n")
    assert hit is not None and hit.id == "xformers-build-torch-cuda-mismatch" and "torch" in hit.packages
    hit = top(index, mismatch + "  ERROR: Failed building wheel for flash-attn\nFailed to build flash-attn\n")
    assert hit is not None and hit.id == "flash-attn-build-torch-cuda-mismatch"
    arch = "ValueError: Unknown CUDA arch (12.0+PTX) or GPU not supported\n"
    assert index.match(arch) == [], "another extension's build is no attention error"
    assert top(index, "Building wheel for flash-attn (setup.py) ... error\n" + arch).id.startswith("torch:")
    warning = ("UserWarning: Attempted to use ninja as the BuildExtension backend but we could not find ninja.. "
               "Falling back to using the slow distutils backend.\n  building 'flash_attn_2_cuda' extension\n")
    assert index.match(warning) == []


def test_a_message_broken_inside_a_word_is_joined_there_and_its_span_stays_in_the_users_text(index):
    """A log viewer that wraps long lines at a fixed width breaks words: `... in th` / `is
    architecture ...` (vllm-project/vllm#13147). When nothing else matched, the paste is joined
    at such breaks, and a message that the join makes whole answers; its span is the user's own."""
    text = ("(Worker pid=1) ERROR 02-12 09:35:06 worker.py:1] ValueError(\"type fp8e4nv not supported in th\n"
            "is architecture. The supported fp8 dtypes are ('fp8e5',)\")\n")
    hit = top(index, text)
    assert hit is not None and hit.id == "triton-fp8-dtype-not-supported-in-architecture"
    assert "broken inside a word" in " ".join(hit.why)
    assert text[hit.span[0]:hit.span[1]].startswith("type fp8e4nv not supported in th\nis architecture")
    # a break that the message does not cross is not a reason to answer
    assert index.match("Some prose that ends in a wo\nrd, then nothing else.\n") == []


def test_a_warning_printed_under_another_class_is_another_copy_of_the_text(index):
    """SGLang vendors FLA and raises `DeprecationWarning("head_first is deprecated ...")` where FLA
    itself warns with UserWarning: printed as a UserWarning, the text comes from FLA's own copy,
    so SGLang's bare site does not answer (fla-org/flash-linear-attention#638); printed under its
    own class it still does."""
    message = "head_first is deprecated and will be removed in a future version. Please use head_first=False for now instead."
    assert index.match(f"fla/ops/gated_delta_rule/chunk.py:331: UserWarning: {message}\n  warnings.warn(\n") == []
    hit = top(index, f"DeprecationWarning: {message}\n")
    assert hit is not None and hit.id.startswith("sglang:")


def test_of_two_named_evidences_the_one_holding_the_other_goes_first(index):
    # xFormers ships its own FA3 build (xformers/flash_attn_3/_C.so); flash-attn's record names the
    # `flash_attn_3` inside that path, xFormers' record the whole of it
    symbol = "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
    xformers_copy = f"/venv/lib/python3.10/site-packages/xformers/flash_attn_3/_C.so: undefined symbol: {symbol}"
    own = f"ImportError: /venv/lib/python3.10/site-packages/flash_attn_3/_C.abi3.so: undefined symbol: {symbol}"
    assert top(index, xformers_copy).id == "xformers-undefined-symbol-torch-abi"
    assert top(index, own).id == "flash-attn-undefined-symbol-torch-abi"


def test_a_library_record_goes_before_the_generic_record_of_every_library_s_failing_file(index):
    # the generic torch-extension record names torch's symbol namespace as its evidence and covers
    # the failing files of eight libraries; xFormers' own record names xFormers' file: at the same
    # score the one about one library answers first (TheLastBen/fast-stable-diffusion#921)
    line = ("/usr/local/lib/python3.8/dist-packages/xformers/_C.so: undefined symbol: "
            "_ZNK3c104impl13OperatorEntry20reportSignatureErrorENS0_12CppSignatureE")
    got = [m.id for m in index.match(line, limit=3)]
    assert got[:2] == ["xformers-undefined-symbol-torch-abi", "torch-extension-undefined-symbol"], got


def test_a_message_quoted_in_prose_and_wrapped_between_words_matches_as_one_line(index):
    """A reporter quoting a message in their own sentence wraps it where their editor did and drops
    its final period (huggingface/parler-tts#228): neither line is the message alone, the two
    joined are; the span covers both lines of the user's text."""
    text = ("ValueError: T5EncoderModel does not support an attention implementation through\n"
            "torch.nn.functional.scaled_dot_product_attention yet`) because the composite model\n")
    hit = top(index, text)
    assert hit is not None and hit.id == "transformers-sdpa-unsupported-model"
    assert text[hit.span[0]:hit.span[1]].endswith("scaled_dot_product_attention yet`) because the composite model")
    # an indented next line is a new statement, not the rest of the sentence
    assert top(index, text.replace("\ntorch.nn", "\n    torch.nn")) is None


def test_a_paste_cut_past_a_heads_first_value_answers_only_with_frames_in_its_package(index):
    """AUTOMATIC1111/stable-diffusion-webui#16490 ends inside xFormers' refusal, past the text
    before its first value; under frames in xformers/ that head names the message, without them
    it says too little."""
    frames = ('  File "/venv/lib/python3.10/site-packages/xformers/ops/fmha/dispatch.py", line 76, in _run_priority_list\n'
              "    raise NotImplementedError(msg)\n")
    last = "NotImplementedError: No operator found for `memory_efficient_\n"
    hit = top(index, f"Traceback (most recent call last):\n{frames}{last}")
    assert hit is not None and hit.id == "xformers-no-operator-found"
    assert "after its first" in " ".join(hit.why)
    assert index.match(last) == []


def test_a_long_cut_start_that_only_one_record_begins_with_needs_no_frames(index):
    """docling-project/docling#1730 ends its log inside transformers' warning, after 76
    characters, with no traceback: a start that long and only one record's is enough; a short
    one is not."""
    long_cut = "INFO:x:y\nYou are attempting to use Flash Attention 2.0 without specifying a torch dtyp\n"
    hit = top(index, long_cut)
    assert hit is not None and hit.id == "transformers-flash-attention-without-torch-dtype-warning"
    assert "only this message begins with" in " ".join(hit.why)
    assert index.match("INFO:x:y\nYou are attempting to use Flash Attention\n") == []


def test_a_fuzzy_match_keeps_the_class_the_line_prints(index):
    """XLabs-AI/x-flux-comfyui#177 quotes torch's `RuntimeError: Expected query, key, and value to
    have the same dtype` cut after its first clause; FlashInfer's reworded `ValueError: query, key,
    and value must have the same dtype` is close in words but raised as another class."""
    flashinfer = next(e for e in index.entries if e.template == "query, key, and value must have the same dtype")
    assert index._fuzzy([flashinfer], [(0, "ValueError: query, key and value must have the same dtype")])
    assert not index._fuzzy([flashinfer], [(0, "RuntimeError: query, key and value must have the same dtype")])
    # a bare `Warning:` (how C++ warnings print) names no class
    assert index._fuzzy([flashinfer], [(0, "Warning: query, key and value must have the same dtype")])


def test_a_long_cut_start_that_only_one_message_of_its_class_begins_with_needs_no_frames(index):
    """torch's C++ SDPA check (RuntimeError) and its Python copy (ValueError) begin alike; a line
    cut after that start and the class it prints leaves one, which answers without frames."""
    cut = "Expected query, key, and value to have the same device type\n"
    runtime, value = top(index, f"RuntimeError: {cut}"), top(index, f"ValueError: {cut}")
    assert runtime is not None and runtime.id.startswith("pytorch-aten:")
    assert value is not None and value.id.startswith("torch:")
    assert all("only this message begins with" in " ".join(hit.why) for hit in (runtime, value))
    # without the class both begin alike, and the start names neither
    unclassed = top(index, cut)
    assert unclassed is None or "only this message begins with" not in " ".join(unclassed.why)
