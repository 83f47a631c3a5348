"""The compiled paste scans (errkb._paste) against their regex reference in errkb.paste."""

import os
import random
from pathlib import Path

import pytest

from errkb import paste, templates

compiled = paste.compiled
needs_compiled = pytest.mark.skipif(compiled is None, reason="errkb._paste is not built")
EVAL = Path(__file__).parent / "eval" / "pastes"

# Pieces of log prefixes, frames and traceback headers, whole and broken, with the characters
# whose class differs between ASCII and Unicode (a no-break space, a superscript two that is a
# digit but not a decimal, an Arabic-Indic three that is a decimal, letters beyond Latin-1).
FRAGMENTS = [
    "(", ")", "EngineCore_DP0", " pid=", "pid=", "12", "7", "[rank", "[rank3]:", "]:", "]", "[", "ERROR", "WARNING",
    "WARN", "INFO", "DEBUG", "CRITICAL", "INFOS", "xINFO", " ", "  ", "\t", "\u00a0", "\u2003", "\x0b", "11-29",
    "10:23:39", "1:2:3", ".5", ",123", ".", ",", "2026-11-29", "2026-11-29 10:23:39", "T", "TP0", " TP0", "engine.py",
    "[engine.py:366]", ":366", "-", "|", ":", " | ", " - ", "x", "é", "²", "\u0663", "中", "_", 'File "', '", line ',
    "/opt/venv/lib/python3.12/site-packages/vllm/attention/layer.py", "9999999999", ", in forward",
    "Traceback (most recent call last):", "Traceback (most recent call last)",
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:", "\n", "    ", "RuntimeError: boom", '"',
]
PREFIXES = ["(EngineCore_DP0 pid=1234) ", "[rank3]: ", "ERROR 01-11 13:09:40 engine.py:366] ",
            "WARNING 11-29 10:23:38 [config.py:88] ", "INFO 11-29 10:23:39.123 [model_runner.py:120] ",
            "[2025-01-01 12:00:00 TP0] ", "[2025-01-01 12:00:00] ", "[2025-01-01T12:00:00,5  ] ",
            "2026-01-01 10:00:00,123 - ERROR - ", "2026-01-01 10:00:00 | INFO | ", "ERROR: ", "CRITICAL | ",
            "12 | ", "DEBUG 01-02 03:04:05 [a-b.c:9] ", "WARN 11-29 10:23:38 [x.py:1] "]
LINES = ["Traceback (most recent call last):", '  File "/opt/x/sglang/srt/layers/a.py", line 88, in forward',
         "    out = attn(q, k, v)", "RuntimeError: head_dim 300 is not supported", "", "   ",
         "During handling of the above exception, another exception occurred:", "\tsource under a tab",
         'File "C:/venv/flash_attn/f.py", line 3', "ValueError: bad", 'File "/a/vllm/b.py", line 123456789, in f',
         'File "/a/vllm/b.py", line 1234567890, in f']


def mutate(text: str, rng: random.Random) -> str:
    if not text:
        return text
    i = rng.randrange(len(text))
    action = rng.randrange(3)
    if action == 0:
        return text[:i] + text[i + 1:]
    insert = rng.choice([" ", "\t", "\u00a0", "1", "\u0663", "²", "]", "[", ":", "é", "\n", "_"])
    return text[:i] + insert + text[i + (action == 2):]


def random_pastes(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        lines = []
        for _ in range(rng.randint(1, 7)):
            kind = rng.random()
            if kind < 0.4:
                line = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 8)))
            else:
                line = "".join(rng.choice(PREFIXES) for _ in range(rng.randint(0, 3))) + rng.choice(LINES)
            lines.append(mutate(line, rng) if rng.random() < 0.3 else line)
        out.append("\n".join(lines) + ("\n" if rng.random() < 0.2 else ""))
    return out


@pytest.fixture(scope="module")
def pastes(dataset):
    rng = random.Random(3)
    sites = rng.sample(list(dataset.sites.values()), 300)
    made = [rng.choice(PREFIXES) + f"{s.error_class or 'RuntimeError'}: {templates.render(s.template, {k: '7' for k in templates.placeholders(s.template)})}"
            for s in sites]
    real = [p.read_text().replace("\r", " ").replace("\\", "/") for p in sorted(EVAL.glob("*"))]
    return real + made + random_pastes(6000, seed=11) + ["", "\n", "\n\n", "x"]


def test_the_compiled_scans_are_built():
    """Without them matching still works, several times slower per paste: say so instead of passing."""
    if os.environ.get("ERRKB_PURE_PYTHON") == "1":
        pytest.skip("ERRKB_PURE_PYTHON=1 asks for the reference")
    assert compiled is not None, "errkb._paste did not build (a C compiler and Python headers are needed)"


@needs_compiled
@pytest.mark.parametrize("scan, found, least", [
    ("strip_prefixes", lambda result: result[1] is not None, 2000),  # the cases are not all prefix-free
    ("find_frames", bool, 1000),
])
def test_scans_agree(pastes, scan, found, least):
    reference, fast = getattr(paste, "py_" + scan), getattr(compiled, scan)
    hits = 0
    for text in pastes:
        expected = reference(text)
        assert fast(text) == expected, repr(text)
        hits += found(expected)
    assert hits > least


@needs_compiled
def test_message_text_and_lines_agree(pastes):
    rng = random.Random(9)
    for text in pastes:
        lines = text.count("\n") + 1
        for skip in (frozenset(), frozenset(rng.sample(range(lines), rng.randint(1, lines)))):
            assert compiled.message_text(text, skip) == paste.py_message_text(text, skip), (repr(text), skip)
            assert compiled.message_lines(text, skip) == paste.py_message_lines(text, skip), (repr(text), skip)


@needs_compiled
def test_the_results_are_ordinary_strings():
    """Text cut from a wider string must be stored as narrowly as any other (Python compares
    strings of different widths as unequal without looking)."""
    text, *_ = compiled.strip_prefixes("[rank0]: 中\nplain")
    assert text == "中\nplain"
    text, *_ = compiled.strip_prefixes("(中 pid=1) plain")
    assert text == "plain" and hash(text) == hash("plain") and {text: 1}["plain"] == 1


def test_message_lines_are_the_lines_of_the_message_text(pastes):
    """One definition of the message, whichever implementation runs."""
    for text in pastes[:2000]:
        skip = frozenset({0})
        joined = "".join(line + "\n" for _, line in paste.message_lines(text, skip))
        assert joined == "".join(line + "\n" for line in paste.message_text(text, skip).split("\n")[:-1] if line.strip())
