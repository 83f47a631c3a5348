from errkb.paste import parse


def test_ansi_colours_and_log_prefixes_are_removed_with_offsets_kept():
    raw = "\x1b[31mERROR 01-11 13:09:40 engine.py:366] RuntimeError: boom happened\x1b[0m"
    paste = parse(raw)
    assert paste.text == "RuntimeError: boom happened"
    start = paste.text.index("boom")
    assert raw[slice(*paste.span(start, start + 4))] == "boom"


def test_stacked_prefixes_from_workers_and_ranks():
    paste = parse("(EngineCore_DP0 pid=4242) [rank3]: ValueError: bad head_size")
    assert paste.text == "ValueError: bad head_size"


def test_sglang_timestamp_prefix():
    assert parse("[2025-06-01 10:00:00 TP0] Scheduler hit an exception").text == "Scheduler hit an exception"


def test_traceback_frames_give_package_evidence_windows_paths_too():
    paste = parse('Traceback (most recent call last):\n'
                  '  File "C:\\venv\\Lib\\site-packages\\flash_attn\\flash_attn_interface.py", line 91, in fwd\n'
                  '  File "/opt/venv/lib/python3.12/site-packages/sglang/kernels/ops/attention/flash_attn/cute/interface.py", line 5\n'
                  "RuntimeError: x")
    assert paste.frames[0] == ("C:/venv/Lib/site-packages/flash_attn/flash_attn_interface.py", 91)
    assert paste.packages == {"flash-attn", "sglang"}


def test_cpp_exception_location_is_evidence():
    paste = parse("what():  No available kernel.  Aborting execution.\n"
                  "Exception raised from _select_sdp_backend at ../aten/src/ATen/native/transformers/cuda/sdp_utils.cpp:784")
    assert "pytorch-aten" in paste.packages
