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
