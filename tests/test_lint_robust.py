"""`errkb lint` never crashes, never hangs and starts fast (issue 18, items 4 and 5): per-file time
limit, FIFOs and devices, standard input, suppressions on multi-line statements, and no libcst or
pydantic when no file passes the prefilter."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import time

from errkb.lint.rule import all_rules
from tests.test_lint_cli import BAD, lint


def test_a_file_past_the_time_limit_is_skipped_and_the_run_goes_on(tmp_path, capsys, monkeypatch):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "sdpa.py").write_text("".join(BAD.splitlines(True)[i] for i in (1, 3, 4, 5)))  # the SDPA call only

    rule = all_rules()["EKB101"]
    run = rule.run

    def never_ends_on_bad(self, ctx):  # the timer, not this loop's bound, must end it
        for _ in range(2000 if ctx.index.module == "bad" else 0):
            time.sleep(0.01)
        return run(self, ctx)

    monkeypatch.setattr(rule, "run", never_ends_on_bad)
    rc, out, err = lint(tmp_path, "--file-timeout", "0.05", capsys=capsys)
    assert "skipped bad.py: timed out: the analysis took longer than 0.05 s" in err
    assert rc == 1 and "sdpa.py:4:" in out and "bad.py" not in out  # the other file is linted
    (tmp_path / "pyproject.toml").write_text("[tool.errkb]\nfile-timeout = 0.05\n")
    assert "bad.py: timed out" in lint(tmp_path, capsys=capsys)[2]

    monkeypatch.undo()  # the default limit; the timed-out result was not cached
    (tmp_path / "pyproject.toml").write_text("[tool.errkb]\n")
    rc, out, err = lint(tmp_path, capsys=capsys)
    assert rc == 1 and "bad.py:3:" in out and "timed out" not in err
    for bad in ("-1", "nan"):  # (a non-number is refused by argparse)
        assert lint(tmp_path, f"--file-timeout={bad}", capsys=capsys)[0] == 2
    (tmp_path / "pyproject.toml").write_text('[tool.errkb]\nfile-timeout = "10"\n')
    rc, _, err = lint(tmp_path, capsys=capsys)
    assert rc == 2 and "file-timeout must be a number" in err


def test_fifos_sockets_and_devices_are_reported_not_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # short relative names: a socket's path has a length limit
    (tmp_path / "bad.py").write_text(BAD)
    os.mkfifo("pipe.py")  # opening it for reading would block until a writer comes
    (tmp_path / "sub").mkdir()
    os.mkfifo("sub/pipe.py")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind("sock.py")
    try:
        proc = subprocess.run([sys.executable, "-m", "errkb.cli", "lint", "--no-cache", "bad.py", "sub",
                               "pipe.py", "sock.py", os.devnull], capture_output=True, text=True, timeout=120)
    finally:
        sock.close()
    assert proc.returncode == 1 and proc.stdout.count("bad.py:") == 2, proc.stderr
    for what in ("sub/pipe.py: not a regular file (a FIFO)", "skipped pipe.py: not a regular file (a FIFO)",
                 "sock.py: not a regular file (a socket)", f"{os.devnull}: not a regular file (a character device)"):
        assert what in proc.stderr, what


def test_stdin_is_linted_under_the_given_filename(tmp_path, capsys, monkeypatch):
    def from_stdin(*args):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BAD.encode())))
        return lint(tmp_path, "-", *args, capsys=capsys)

    rc, out, _ = from_stdin("--stdin-filename", "pkg/mod.py", "--format", "json")
    assert rc == 1 and {(f["path"], f["rule"]) for f in json.loads(out)} == {("pkg/mod.py", "EKB101"),
                                                                            ("pkg/mod.py", "EKB302")}
    assert from_stdin()[1].startswith("-:3:")
    (tmp_path / "pyproject.toml").write_text('[tool.errkb.per-file-ignores]\n"pkg/**" = ["EKB3"]\n')
    rc, out, _ = from_stdin("--stdin-filename", "pkg/mod.py")
    assert rc == 1 and "EKB101" in out and "EKB302" not in out
    (tmp_path / "pyproject.toml").write_text('[tool.errkb]\nexclude = ["pkg/**"]\n')
    assert from_stdin("--stdin-filename", "pkg/mod.py")[:2] == (0, "")
    rc, _, err = lint(tmp_path, "-", "other.py", capsys=capsys)
    assert rc == 2 and "cannot be combined" in err
    rc, _, err = lint(tmp_path, "other.py", "--stdin-filename", "pkg/mod.py", capsys=capsys)
    assert rc == 2 and "give '-'" in err


def test_a_suppression_on_any_line_of_a_statement_covers_it(tmp_path, capsys):
    head = "from sglang.kernels.ops.attention.flash_attention_v4 import flash_attn_with_kvcache\n"
    call = "out = flash_attn_with_kvcache({0}\n    q, kc, vc,{1}\n    k=k_new,{2}\n){3}\n"
    tag = "  # errkb: ignore[EKB101]"
    code = head + "".join(call.format(*[tag if i == n else "" for i in range(4)]) for n in range(4))
    code += call.format("", "", "", "") + "x = 1" + tag + "\n" + call.format("", "", "", "  # errkb: ignore[EKB102]")
    (tmp_path / "a.py").write_text(code)
    rc, out, _ = lint(tmp_path, "--no-cache", "--report-unused-suppressions", "--format", "json", capsys=capsys)
    found = [(f["line"], f["rule"]) for f in json.loads(out)]
    # the first four calls are silenced from their first, middle, keyword and closing lines; the
    # fifth has no comment, the comment after it belongs to `x = 1`, the last one names another rule
    assert found == [(20, "EKB101"), (22, "EKB000"), (25, "EKB101"), (26, "EKB000")], found


PROBE = ("import json, sys\nfrom errkb.cli import main\nrc = main(sys.argv[1:])\n"
         "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'libcst', 'pydantic'})))\n")


def test_no_libcst_or_pydantic_unless_a_file_passes_the_prefilter(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.errkb]\n")  # the cache (and rule table) live here
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "plain.py").write_text("import torch\n\ndef attention(q, k, v):\n    return q @ k.T @ v\n")

    def heavy_modules(*paths):
        proc = subprocess.run([sys.executable, "-c", PROBE, "lint", *paths], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        return json.loads(proc.stdout.splitlines()[-1])

    assert heavy_modules("bad.py") == ["libcst"]  # the probe sees an import (and the table is cached)
    (tmp_path / "run.sh").write_text("python train.py --epochs 3\n")  # a launch-command file, no launch
    assert heavy_modules("plain.py", "run.sh") == []
