"""Which reason of xFormers' refusal listing decided it (errkb/refusals.py), and the ranking
that follows from it."""

from errkb import refusals

# The shape xformers 0.0.16-0.0.23 printed for CPU float32 inputs (reasons as in its common.py).
LISTING = """NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:
     query       : shape=(8, 1024, 1, 64) (torch.float32)
     key         : shape=(8, 1024, 1, 64) (torch.float32)
     value       : shape=(8, 1024, 1, 64) (torch.float32)
     attn_bias   : <class 'NoneType'>
     p           : 0.0
`cutlassF` is not supported because:
    device=cpu (supported: {'cuda'})
`flshattF` is not supported because:
    device=cpu (supported: {'cuda'})
    dtype=torch.float32 (supported: {torch.bfloat16, torch.float16})
`smallkF` is not supported because:
    max(query.shape[-1] != value.shape[-1]) > 32
    unsupported embed per head: 64
"""


def lines_of(spans, text=LISTING):
    return [text[a:b].strip() for a, b in spans]


def test_the_cutlass_reason_and_the_reasons_of_every_kernel_decide():
    deciding, incidental = refusals.reason_spans(LISTING)
    assert lines_of(deciding) == ["device=cpu (supported: {'cuda'})"] * 2
    assert lines_of(incidental) == ["dtype=torch.float32 (supported: {torch.bfloat16, torch.float16})",
                                    "max(query.shape[-1] != value.shape[-1]) > 32", "unsupported embed per head: 64"]


def test_one_block_alone_decides_nothing():
    one = LISTING.split("`flshattF`")[0]
    assert refusals.reason_spans(one) == ([], [])


def test_a_block_ends_at_a_blank_line_or_a_traceback():
    text = LISTING.replace("    unsupported embed per head: 64\n", "\nTraceback (most recent call last):\n")
    _, incidental = refusals.reason_spans(text)
    assert lines_of(incidental, text) == ["dtype=torch.float32 (supported: {torch.bfloat16, torch.float16})",
                                          "max(query.shape[-1] != value.shape[-1]) > 32"]


def test_the_deciding_reason_goes_first_and_the_incidental_one_last(index):
    got = [m.id for m in index.match(LISTING, limit=5)]
    assert got[:2] == ["xformers-inputs-on-cpu", "xformers-no-operator-found"]
    assert got.index("xformers-head-dim-above-kernel-limit") > got.index("xformers-no-operator-found")


def test_a_deciding_reason_goes_first_when_both_scores_are_capped(index):
    """ComfyUI-SUPIR#167: both records score the cap (1.0) on an exact match, so the deciding
    reason's bonus is lost there; the hit on a deciding reason still goes before the headline."""
    text = LISTING.replace("    device=cpu (supported: {'cuda'})\n", "    xFormers wasn't build with CUDA support\n")
    got = [m.id for m in index.match(text, limit=3)]
    assert got[:2] == ["xformers-not-built-with-cuda", "xformers-no-operator-found"], got


def test_a_reason_printed_above_every_header_moves_to_the_last_listing(index):
    """A paste that opens with the tail of one listing (its first reasons headless) and then holds a
    whole one: the record answers on the deciding line of the last listing, the one that raised."""
    tail = ("    requires device with capability == (8, 0) but your GPU has capability (12, 0) (too new)\n"
            "`cutlassF-pt` is not supported because:\n"
            "    requires device with capability <= (9, 0) but your GPU has capability (12, 0) (too new)\n")
    whole = ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
             "     query       : shape=(1, 426, 32, 128) (torch.float32)\n"
             "`fa2F@2.8.3` is not supported because:\n"
             "    dtype=torch.float32 (supported: {torch.float16, torch.bfloat16})\n"
             "`cutlassF-pt` is not supported because:\n"
             "    requires device with capability <= (9, 0) but your GPU has capability (12, 0) (too new)\n")
    text = tail + whole
    got = index.match(text, limit=1)[0]
    assert got.id == "xformers-gpu-too-new-for-kernels"
    assert got.span[0] == text.rindex("requires device with capability <= (9, 0)")


# A paste that begins inside the listing (its first header cut off): the tail of xformers 0.0.18's
# tritonflashattF block on an install without Triton (common.py's "Operator wasn't built", then
# triton.py's "triton is not available"), then the smallkF block, as in dinov2#3.
CUT = ("Operator wasn't built - see `python -m xformers.info` for more info\n"
       "    triton is not available\n"
       "`smallkF` is not supported because:\n"
       "    max(query.shape[-1] != value.shape[-1]) > 32\n"
       "    unsupported embed per head: 64\n")


def test_the_small_k_limit_is_incidental_even_in_a_cut_listing():
    deciding, incidental = refusals.reason_spans(CUT)
    assert deciding == []
    assert lines_of(incidental, CUT) == ["max(query.shape[-1] != value.shape[-1]) > 32", "unsupported embed per head: 64"]


def test_another_kernel_s_head_dim_limit_alone_decides_nothing():
    one = "`tritonflashattF` is not supported because:\n    max(query.shape[-1] != value.shape[-1]) > 128\n"
    assert refusals.reason_spans(one) == ([], [])


def test_a_cut_listing_is_not_answered_by_the_small_k_limit(index):
    got = index.match(CUT, limit=5)
    ids = [m.id for m in got]
    assert ids.index("xformers-operator-not-built") < ids.index("xformers-head-dim-above-kernel-limit")
    limit = got[ids.index("xformers-head-dim-above-kernel-limit")]
    assert any("small-K kernel" in why for why in limit.why)
