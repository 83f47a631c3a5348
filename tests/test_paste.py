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


def test_frames_in_xformers_transformers_diffusers_and_triton_name_them_and_not_their_namesakes():
    paste = parse('Traceback (most recent call last):\n'
                  '  File "/v/site-packages/xformers/ops/fmha/dispatch.py", line 76, in f\n'
                  '  File "/v/site-packages/transformers/modeling_utils.py", line 5, in g\n'
                  '  File "/v/site-packages/diffusers/models/attention_processor.py", line 9, in h\n'
                  '  File "/v/site-packages/triton/compiler/compiler.py", line 2, in i\n'
                  '  File "/v/site-packages/sentence_transformers/SentenceTransformer.py", line 3, in j\n'
                  "RuntimeError: x")
    assert paste.packages == {"xformers", "transformers", "diffusers", "triton"}


def test_cpp_exception_location_is_evidence():
    paste = parse("what():  No available kernel.  Aborting execution.\n"
                  "Exception raised from _select_sdp_backend at ../aten/src/ATen/native/transformers/cuda/sdp_utils.cpp:784")
    assert "pytorch-aten" in paste.packages


def test_info_lines_and_frames_are_not_message_text():
    paste = parse("INFO 11-29 10:23:39 [model_runner.py:120] Loading weights took 12.3 GB\n"
                  'Traceback (most recent call last):\n  File "/x/sglang/a.py", line 3, in f\n    run(q)\n'
                  "WARNING 11-29 10:23:40 [config.py:88] Casting to bfloat16\n"
                  "ValueError: head_dim 300 too large")
    assert "Loading weights" not in paste.message_text and "run(q)" not in paste.message_text
    assert "most recent call" not in paste.message_text
    assert "Casting to bfloat16" in paste.message_text and "head_dim 300" in paste.message_text


def test_message_text_drops_frames_and_traceback_lines_wherever_they_sit():
    text = ('Traceback (most recent call last):\n  File "a.py", line 1, in f\n    f()\n  File "b.py", line 2, in g\n'
            "ValueError: first\n\nThe above exception was the direct cause of the following exception:\n\n"
            'Traceback (most recent call last):\n  File "c.py", line 3\nRuntimeError: second')
    assert parse(text).message_text == "ValueError: first\n\n\nRuntimeError: second\n"


def test_prefixes_are_stripped_on_the_first_line_and_info_lines_are_noted():
    paste = parse("INFO 01-11 13:09:39 engine.py:12] loading\nERROR 01-11 13:09:40 engine.py:366] boom\n[rank3]: x")
    assert paste.text == "loading\nboom\nx"
    assert paste.info_lines == {0}


def test_message_lines_are_the_message_texts_lines_with_their_offsets():
    text = ("INFO 01-11 13:09:39 engine.py:12] loading\nTraceback (most recent call last):\n"
            '  File "a.py", line 1, in f\n    f()\nValueError: boom\n\nsecond line')
    paste = parse(text)
    lines = paste.message_lines()
    assert [line for _, line in lines] == ["ValueError: boom", "second line"]
    assert all(paste.text[pos:pos + len(line)] == line for pos, line in lines)


def test_a_line_number_no_file_has_is_not_a_frame():
    """int() refuses numbers of over 4,300 digits: such a "frame" must not crash parsing."""
    paste = parse('File "/x/vllm/a.py", line ' + "9" * 5000 + '\nFile "/x/sglang/b.py", line 7, in f\n'
                  "Exception raised from f at a.cpp:" + "9" * 5000)
    assert paste.frames == [("/x/sglang/b.py", 7)] and paste.packages == {"sglang"}


def test_the_stray_one_of_windows_torch_warnings_is_not_part_of_the_message():
    original = "\x1b[33mC:\\sd\\attn.py:72: UserWarning: 1Torch was not compiled with flash attention.\x1b[0m\n"
    p = parse(original)
    start = p.text.index("Torch was")
    assert "UserWarning: Torch was not compiled" in p.text
    assert original[slice(*p.span(start, start + 5))] == "Torch"  # offsets still lead to the original
    assert parse("Loaded 1Torch model\nUserWarning: 12 heads").text == "Loaded 1Torch model\nUserWarning: 12 heads"


def test_the_line_under_an_exec_frame_is_the_message_not_its_source():
    # pip indents a build backend's output; code run by exec() ("<string>") prints no source line
    text = ('      Traceback (most recent call last):\n'
            '        File "<string>", line 23, in <module>\n'
            "      ModuleNotFoundError: No module named 'torch'\n")
    assert [line for _, line in parse(text).message_lines()] == ["      ModuleNotFoundError: No module named 'torch'"]
    deeper = '        File "/x/setup.py", line 23, in <module>\n          import torch\n'
    assert parse(deeper).message_lines() == []


def test_typographic_quotes_read_as_the_ascii_ones_programs_print():
    original = "ImportError: cannot import name \u2018LlamaFlashAttention2\u2019 from \u201ctransformers\u201d"
    paste = parse(original)
    assert "name 'LlamaFlashAttention2' from \"transformers\"" in paste.text
    start = paste.text.index("'LlamaFlashAttention2'")
    assert paste.span(start, start + 22) == (original.index("\u2018"), original.index("\u2019") + 1)
