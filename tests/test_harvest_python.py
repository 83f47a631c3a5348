import textwrap

from errkb.harvest.python_sites import extract

SOURCE = textwrap.dedent('''
    import logging
    import warnings
    logger = logging.getLogger(__name__)
    _MSG = "FA4 path does not support rotary embedding."

    def check(head_dim, q, ver, arch):
        if head_dim > 256:
            raise ValueError(f"head_dim {head_dim} must be <= 256, got q.shape={q.shape[-1]}")
        if ver not in (3, 4):
            raise NotImplementedError("Unsupported FA version {}".format(ver))
        if arch < 80:
            raise RuntimeError("arch %s too old for %s" % (arch, "FA2"))
        assert q.is_cuda, "q must be on CUDA"
        warnings.warn(f"falling back for head_dim={head_dim}", RuntimeWarning)
        logger.warning("Backend %s is slow on sm%d", "fa3", arch)
        raise NotImplementedError(_MSG)

    def local_message(x):
        msg = f"bad value {x} for page_size"
        raise ValueError(msg)

    def not_messages(x):
        raise ValueError(x)
        raise KeyError
''')


def by_line(sites):
    return {s.line: s for s in sites}


def test_extracts_each_kind_with_placeholders():
    sites = by_line(extract("pkg/mod.py", SOURCE))
    assert sites[9].template == "head_dim {head_dim} must be <= 256, got q.shape={q_shape_1}"
    assert sites[9].error_class == "ValueError" and sites[9].kind == "raise" and sites[9].function == "check"
    assert sites[11].template == "Unsupported FA version {ver}"
    assert sites[13].template == "arch {arch} too old for FA2"
    assert (sites[14].kind, sites[14].error_class, sites[14].template) == ("assert", "AssertionError", "q must be on CUDA")
    assert (sites[15].kind, sites[15].error_class) == ("warning", "RuntimeWarning")
    assert (sites[16].kind, sites[16].template) == ("log-warning", "Backend fa3 is slow on sm{arch}")
    assert sites[17].template == "FA4 path does not support rotary embedding."


def test_follows_a_local_message_variable():
    sites = by_line(extract("pkg/mod.py", SOURCE))
    assert sites[21].template == "bad value {x} for page_size"


def test_skips_raises_without_readable_text():
    lines = {s.line for s in extract("pkg/mod.py", SOURCE)}
    assert not lines & {24, 25}


def test_unparsable_file_yields_nothing():
    assert extract("bad.py", "def broken(:\n") == []


def test_info_lines_are_read_only_for_packages_that_explain_themselves_at_info():
    from errkb.harvest import python_sites

    text = 'logger.info("Cannot use FlashAttention-2 backend for head size %d.", head_size)\n'
    assert python_sites.extract("vllm/x.py", text) == []
    [site] = python_sites.extract("vllm/x.py", text, info_lines=True)
    assert site.kind == "log-info" and site.template == "Cannot use FlashAttention-2 backend for head size {head_size}."


CONDITIONAL = textwrap.dedent('''
    import logging
    import warnings
    logger = logging.getLogger(__name__)

    def pick(pv, mode, causal, d):
        raise ValueError("Native MXFP8 PV requires e4m3 Q/K/V" if pv
                         else "QK MXFP8 requires e4m3 Q/K and bf16 V")
        raise NotImplementedError(f"{mode} needs head_dim 64" if d == 64 else
                                  "causal masking is not supported" if causal else f"{mode} is unknown here")
        assert d > 0, "head_dim must be positive" if pv else x
        warnings.warn("paged KV is slow" if pv else "dense KV is slow", RuntimeWarning)
        logger.warning("backend %s falls back" if pv else "backend %s is disabled", mode)
        raise RuntimeError(("split {n} is too large" if pv else "split {n} is too small").format(n=d))
        raise RuntimeError(("page %d is too large" if pv else "page %d is empty") % d)

    def via_local(pv):
        msg = "window must be positive" if pv else "window must be even"
        raise ValueError(msg)

    def unchanged(pv, x):
        raise ValueError("mode " + ("paged" if pv else "dense") + " is not supported")
        raise ValueError(f"bad layout {'bshd' if pv else 'thd'}")
        raise ValueError(x if pv else None)
''')


def templates_at(sites):
    out = {}
    for s in sites:
        out.setdefault(s.line, []).append(s.template)
    return out


def test_a_conditional_message_gives_one_site_per_branch():
    sites = extract("pkg/cond.py", CONDITIONAL)
    at = templates_at(sites)
    assert at[7] == ["Native MXFP8 PV requires e4m3 Q/K/V", "QK MXFP8 requires e4m3 Q/K and bf16 V"]
    first = [s for s in sites if s.line == 7]
    assert {(s.kind, s.error_class, s.function) for s in first} == {("raise", "ValueError", "pick")}
    # nested conditionals, f-string branches
    assert at[9] == ["{mode} needs head_dim 64", "causal masking is not supported", "{mode} is unknown here"]
    # a branch with no readable text is skipped, the other kept
    assert at[11] == ["head_dim must be positive"]
    assert at[12] == ["paged KV is slow", "dense KV is slow"]
    assert at[13] == ["backend {mode} falls back", "backend {mode} is disabled"]
    assert at[14] == ["split {d} is too large", "split {d} is too small"]
    assert at[15] == ["page {d} is too large", "page {d} is empty"]
    assert at[19] == ["window must be positive", "window must be even"]


def test_a_conditional_inside_a_message_stays_one_placeholder():
    """Only a whole message is split: these templates (and so their site ids) are as before."""
    at = templates_at(extract("pkg/cond.py", CONDITIONAL))
    assert at[22] == ["mode {paged_if_pv_else_dense} is not supported"]
    assert len(at[23]) == 1 and at[23][0].startswith("bad layout {")
    assert 24 not in at


def test_an_assert_whose_message_is_an_exception_reads_that_exceptions_text():
    # vLLM 0.4-0.6's selector: `assert is_cpu(), RuntimeError("...")` prints
    # `AssertionError: Torch SDPA backend is only used for the CPU device.`
    source = textwrap.dedent('''
        def pick(backend):
            assert backend.is_cpu(), RuntimeError(
                "Torch SDPA backend is only used for the CPU device.")
            assert backend.ok, make_message(backend)
    ''')
    sites = extract("vllm/attention/selector.py", source)
    assert [(s.kind, s.error_class, s.template) for s in sites] == [
        ("assert", "AssertionError", "Torch SDPA backend is only used for the CPU device.")]
