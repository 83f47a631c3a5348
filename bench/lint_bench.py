"""Benchmark `errkb lint` on a large real tree, side by side in one run.

    .venv/bin/python bench/lint_bench.py                       # SGLang 0.5.23's python package
    .venv/bin/python bench/lint_bench.py --tree path/to/src    # any other tree
    .venv/bin/python bench/lint_bench.py --no-fixit            # skip the (slow) Fixit column
    .venv/bin/python bench/lint_bench.py --processes-only      # only the whole-process table

Whole processes (second table): `python -c pass`, then `errkb lint FILE` as pre-commit runs it
(one file without kernel calls, rule table cached as on every run after the first; the same on
a first run; one just-edited file with a kernel call, so libcst loads), `errkb lint TREE` warm,
and the whole tree cold (`--no-cache`: no cache read or written, the default number of
processes and one) next to Semgrep on the same tree, with Ruff (`ruff check --isolated`, with
its cache; on the tree both `--select E9`, which has nothing to print, and its default rules)
and Semgrep (one rule equivalent to EKB101) when they are installed (the venv's bin folder
first, then PATH). Each fast command runs --repeat times, each whole-tree cold one
--repeat-cold times; the table gives the median, and the load average before and after.

Modes: libcst parse-only of every file; Fixit 2 with one import-resolving rule equivalent to
EKB102 (needs `pip install fixit` in the venv; it is not an errkb dependency); errkb lint cold
(fresh cache, 1 process), warm (same cache, 1 process), cold on 2 processes, cache off, and
cache off without the stages between the prefilter and libcst (lint/screen.py, lint/narrow.py:
every file that passes the prefilter parsed whole, every rule run). errkb's findings must be
identical in every mode; Fixit's count is shown next to EKB102's.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import libcst as cst

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_WHEEL = "../cache/dl/sglang/sglang-0.5.23-*.whl"

ROTARY_TARGETS = {
    "sglang.kernels.ops.attention.flash_attention_v4.flash_attn_with_kvcache",
    "sglang.kernels.ops.attention.flash_attention_v4_sm120.flash_attn_with_kvcache",
}


# ------------------------------------------------------------------ the Fixit rule

try:
    from fixit import LintRule
    from libcst.metadata import QualifiedNameProvider

    class FixitFa4KvcacheRotary(LintRule):
        """Fixit 2 version of EKB102: rotary_* passed to SGLang's FA4 flash_attn_with_kvcache."""

        METADATA_DEPENDENCIES = (QualifiedNameProvider,)
        MESSAGE = "NotImplementedError: FA4 path does not support rotary embedding."

        def visit_Call(self, node: cst.Call) -> None:
            names = self.get_metadata(QualifiedNameProvider, node.func, set())
            if not names or not all(_target(n.name) for n in names):
                return
            for a in node.args:
                if (a.keyword is not None and a.keyword.value in ("rotary_cos", "rotary_sin", "rotary_seqlens")
                        and not (isinstance(a.value, cst.Name) and a.value.value == "None")):
                    self.report(a, self.MESSAGE)
                    return
except ImportError:  # fixit is optional
    LintRule = None


def _target(name: str) -> bool:
    if name in ROTARY_TARGETS:
        return True
    # QualifiedNameProvider leaves relative imports relative: ".flash_attention_v4.flash_attn_with_kvcache"
    return name.startswith(".") and any(t.endswith(name.lstrip(".")) for t in ROTARY_TARGETS)


# ------------------------------------------------------------------ modes


def tree_from_wheel(pattern: str, dest: Path) -> Path:
    wheels = sorted(glob.glob(str(ROOT / pattern)))
    if not wheels:
        sys.exit(f"no wheel matches {pattern}")
    out = dest / Path(wheels[-1]).stem
    if not (out / "sglang").is_dir():
        with zipfile.ZipFile(wheels[-1]) as zf:
            zf.extractall(out, [n for n in zf.namelist() if n.startswith("sglang/") and n.endswith(".py")])
    return out / "sglang"


def parse_only(files: list[Path]) -> tuple[float, int]:
    t = time.perf_counter()
    failed = 0
    for p in files:
        try:
            cst.parse_module(p.read_bytes())
        except Exception:
            failed += 1
    return time.perf_counter() - t, failed


def fixit_run(tree: Path) -> tuple[float, int]:
    from fixit.api import fixit_paths
    from fixit.ftypes import Options, QualifiedRule

    sys.path.insert(0, str(Path(__file__).parent))
    options = Options(rules=[QualifiedRule("lint_bench", "FixitFa4KvcacheRotary")])
    t = time.perf_counter()
    count = 0
    for result in fixit_paths([tree], options=options, parallel=False):
        if result.violation is not None:
            count += 1
    return time.perf_counter() - t, count


def errkb_run(tree: Path, cache: Path | None, jobs: int, stages: bool = True):
    from errkb import layout
    from errkb.lint import engine
    from errkb.lint.config import Config
    from errkb.lint.rule import all_rules
    from errkb.lint.runner import lint_paths
    from errkb.lint.table import RecordTexts

    cfg = Config(root=tree.parent, cache_dir=cache)
    rules = all_rules()
    texts = RecordTexts(layout.default_data_dir(), {r for cls in rules.values() for r in cls.RECORDS})
    engine.SCREEN = stages
    try:
        t = time.perf_counter()
        run = lint_paths([tree], cfg, list(rules), texts, jobs=jobs, use_cache=cache is not None)
        return time.perf_counter() - t, run
    finally:
        engine.SCREEN = True


# ------------------------------------------------------------------ whole processes

SEMGREP_RULE = """rules:
  - id: fa4-kvcache-inplace-update
    languages: [python]
    severity: ERROR
    message: SGLang's FA4 flash_attn_with_kvcache cannot append k/v to the cache (errkb EKB101)
    pattern-either:
      - pattern: sglang.kernels.ops.attention.flash_attention_v4.flash_attn_with_kvcache(..., k=$K, ...)
      - pattern: sglang.kernels.ops.attention.flash_attention_v4.flash_attn_with_kvcache(..., v=$V, ...)
"""


# bytecode is written and reused, as after a normal install (some shells set PYTHONDONTWRITEBYTECODE)
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
       "SEMGREP_ENABLE_VERSION_CHECK": "0", "SEMGREP_SEND_METRICS": "off"}


def _clock(cmd: list[str], cwd: Path, repeat: int, before=None) -> float:
    """Median wall time of a whole process (before() runs untimed ahead of each)."""
    times = []
    for _ in range(repeat):
        if before:
            before()
        t = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _pick(files: list[Path], kernel: bool) -> Path:
    """A mid-sized file that fails (or passes) errkb's prefilter."""
    from errkb.lint.prefilter import may_match, tokens_of
    from errkb.lint.rule import all_rules

    tokens = tokens_of(cls.PREFILTER for cls in all_rules().values())
    fits = [p for p in files if may_match(p.read_bytes(), tokens) == kernel]
    fits.sort(key=lambda p: p.stat().st_size)
    return fits[len(fits) // 2]


def _tool(name: str) -> str | None:
    """A tool from the venv's bin folder, else from PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def process_times(tree: Path, files: list[Path], work: Path, repeat: int,
                  repeat_cold: int = 3) -> list[tuple[str, float, str]]:
    errkb = str(Path(sys.executable).parent / "errkb")
    ruff, semgrep = _tool("ruff"), _tool("semgrep")
    have_ruff, have_semgrep = ruff is not None, semgrep is not None
    proj = work / "project"  # a project as pre-commit sees it: pyproject.toml, one staged file
    proj.mkdir()
    (proj / "pyproject.toml").write_text("[tool.errkb]\n")
    plain, kernel = _pick(files, kernel=False), _pick(files, kernel=True)
    shutil.copy(plain, proj / "plain.py")
    edits = iter(range(10**6))

    def edit_kernel_file():  # a new comment each time: neither cache knows the file
        (proj / "kernel.py").write_bytes(kernel.read_bytes() + f"\n# edit {next(edits)}\n".encode())

    def no_cache():
        shutil.rmtree(proj / ".errkb-cache", ignore_errors=True)

    rows = [("python -c pass", _clock([sys.executable, "-c", "pass"], proj, repeat), "")]
    _clock([errkb, "lint", "plain.py"], proj, 1)  # the rule table is cached from now on
    rows.append(("errkb lint, 1 file without kernel calls (pre-commit)",
                 _clock([errkb, "lint", "plain.py"], proj, repeat), f"{plain.relative_to(tree)}"))
    rows.append(("errkb lint, same file, first run (no cache yet)",
                 _clock([errkb, "lint", "plain.py"], proj, repeat, before=no_cache), "builds the rule table"))
    edit_kernel_file()
    rows.append(("errkb lint, 1 just-edited file with a kernel call",
                 _clock([errkb, "lint", "kernel.py"], proj, repeat, before=edit_kernel_file),
                 f"{kernel.relative_to(tree)}; loads libcst"))
    if have_ruff:
        _clock([ruff, "check", "--isolated", "--exit-zero", "plain.py"], proj, 1)
        rows.append(("ruff check, same 1 file", _clock([ruff, "check", "--isolated", "--exit-zero", "plain.py"],
                                                       proj, repeat), "default rules, warm cache"))
    if have_semgrep:
        (work / "rule.yml").write_text(SEMGREP_RULE)
        semgrep_cmd = [semgrep, "scan", "--config", str(work / "rule.yml"), "--metrics=off", "--quiet",
                       "--disable-version-check"]
        rows.append(("semgrep scan, same 1 file", _clock([*semgrep_cmd, "plain.py"], proj, repeat), "1 rule"))

    cache = ["--cache-dir", str(work / "tree-cache")]
    _clock([errkb, "lint", *cache, str(tree)], proj, 1)  # cold run: fills the cache
    rows.append((f"errkb lint, whole tree warm ({len(files)} files)",
                 _clock([errkb, "lint", *cache, str(tree)], proj, repeat), "cache filled by a cold run"))
    jobs = 1 if (os.cpu_count() or 1) < 2 else min(os.cpu_count() or 1, 8)
    rows.append(("errkb lint --no-cache, whole tree cold", _clock([errkb, "lint", "--no-cache", str(tree)], proj,
                                                                   repeat_cold),
                 f"default: {jobs} processes; median of {repeat_cold}"))
    rows.append(("errkb lint --no-cache -j1, whole tree cold",
                 _clock([errkb, "lint", "--no-cache", "-j1", str(tree)], proj, repeat_cold),
                 f"1 process; median of {repeat_cold}"))
    if have_semgrep:
        rows.append(("semgrep scan, whole tree", _clock([*semgrep_cmd, str(tree)], proj, repeat_cold),
                     f"1 rule, no warm mode; median of {repeat_cold}"))
    if have_ruff:  # its default rules print ~40,000 diagnostics on SGLang; E9 (syntax errors) prints none
        for what, select, note in (("E9", ["--select", "E9"], "syntax errors only: nothing to print"),
                                   ("default", [], "default rules: prints every diagnostic")):
            ruff_cmd = [ruff, "check", "--isolated", "--exit-zero", "--output-format", "concise", *select,
                        "--cache-dir", str(work / f"ruff-cache-{what}"), str(tree)]
            _clock(ruff_cmd, proj, 1)
            rows.append((f"ruff check --select {what}, whole tree warm" if select else
                         "ruff check, whole tree warm", _clock(ruff_cmd, proj, repeat), note))
    missing = [n for n, have in (("ruff", have_ruff), ("semgrep", have_semgrep)) if not have]
    if missing:
        rows.append((f"({', '.join(missing)} not installed in the venv)", 0.0, "pip install ruff semgrep"))
    return rows


def print_process_table(rows: list[tuple[str, float, str]], repeat: int) -> None:
    bare = rows[0][1]
    print()
    print(f"| whole process | seconds (median of {repeat} unless noted) | × python -c pass | note |")
    print("| --- | ---: | ---: | --- |")
    for name, secs, note in rows:
        print(f"| {name} | {secs:.3f} | {secs / bare:.1f} | {note} |")
    secs = {name: s for name, s, _ in rows}
    one = rows[1][1]
    warm = next(s for name, s in secs.items() if name.startswith("errkb lint, whole tree warm"))
    cold = secs["errkb lint --no-cache, whole tree cold"]
    print()
    print(f"goals: 1 file {one:.3f} s (<= 0.3 s: {one <= 0.3}), {one / bare:.1f}× bare python (<= 5×: "
          f"{one / bare <= 5}); warm whole tree {warm:.3f} s (<= 0.5 s: {warm <= 0.5})", end="")
    semgrep = secs.get("semgrep scan, whole tree")
    if semgrep:
        print(f"; cold whole tree {cold:.3f} s vs Semgrep {semgrep:.3f} s ({cold / semgrep:.2f}×, "
              f"<= Semgrep: {cold <= semgrep})", end="")
    print()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", type=Path, help="lint this folder instead of the SGLang wheel's package")
    ap.add_argument("--wheel", default=DEFAULT_WHEEL, help="wheel glob, relative to the repo")
    ap.add_argument("--no-fixit", action="store_true")
    ap.add_argument("--processes-only", action="store_true", help="only the whole-process table")
    ap.add_argument("--repeat", type=int, default=5, help="runs per fast whole-process command (median)")
    ap.add_argument("--repeat-cold", type=int, default=3, help="runs per whole-tree cold command (median)")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)

    work = Path(tempfile.mkdtemp(prefix="errkb-lint-bench-"))
    try:
        tree = args.tree.resolve() if args.tree else tree_from_wheel(args.wheel, work)
        files = sorted(p for p in tree.rglob("*.py") if p.is_file())
        size = sum(p.stat().st_size for p in files)
        print(f"tree: {tree} — {len(files)} Python files, {size / 1e6:.1f} MB")

        print(f"load average (1/5/15 min) before: {_load()}")
        if args.processes_only:
            print("running: whole processes …")
            print_process_table(process_times(tree, files, work, args.repeat, args.repeat_cold), args.repeat)
            print(f"load average (1/5/15 min) after: {_load()}")
            return 0
        rows = []
        print("running: libcst parse-only …")
        t_parse, failed = parse_only(files)
        rows.append(("libcst parse-only, every file", t_parse, f"{failed} unparsable"))
        runs = {}
        cache = work / "cache"
        print("running: errkb lint cold, warm, 2 processes, cache off, cache off without the stages …")
        t, runs["cold"] = errkb_run(tree, cache, 1)
        rows.append(("errkb lint cold (1 process)", t, None))
        t, runs["warm"] = errkb_run(tree, cache, 1)
        rows.append(("errkb lint warm cache (1 process)", t, None))
        t, runs["cold-2"] = errkb_run(tree, work / "cache2", 2)
        rows.append(("errkb lint cold, 2 processes", t, None))
        t, runs["no-cache"] = errkb_run(tree, None, 1)
        rows.append(("errkb lint, cache off (1 process)", t, None))
        t, runs["no-stages"] = errkb_run(tree, None, 1, stages=False)
        rows.append(("errkb lint, cache off, no stages after the prefilter (1 process)", t, None))
        if not args.no_fixit and LintRule is not None:
            print("running: Fixit 2 …")
            t, count = fixit_run(tree)
            ekb102 = sum(f.rule == "EKB102" for f in runs["cold"].findings)
            rows.append(("Fixit 2, 1 import-resolving rule (1 process)", t,
                         f"{count} findings (errkb EKB102: {ekb102})"))

        reference = [f.to_json() for f in runs["cold"].findings]
        same = all([f.to_json() for f in r.findings] == reference for r in runs.values())
        for name, run in runs.items():
            if name != "warm":
                continue
            print(f"warm run served {run.cached} of {run.files} files from the cache")
        cold = rows[1][1]
        print()
        print("| mode | seconds | × parse-only | note |")
        print("| --- | ---: | ---: | --- |")
        for name, secs, note in rows:
            if note is None:
                note = f"{len(reference)} findings"
            print(f"| {name} | {secs:.2f} | {secs / t_parse:.2f} | {note} |")
        print()
        print(f"cold / parse-only: {cold / t_parse:.2f}×; warm speed-up over cold: {cold / rows[2][1]:.1f}×; "
              f"2 processes vs 1: {cold / rows[3][1]:.2f}×; stages' speed-up (cache off): "
              f"{rows[5][1] / rows[4][1]:.2f}×", end="")
        fixit = [r for r in rows if r[0].startswith("Fixit")]
        if fixit:
            print(f"; Fixit / errkb cold: {fixit[0][1] / cold:.1f}×", end="")
        print()
        print(f"identical findings in every errkb mode: {same}")
        skipped = runs["cold"].skipped
        if skipped:
            print(f"skipped files: {len(skipped)} ({'; '.join(f'{r.path}: {r.skipped}' for r in skipped[:3])})")
        print("running: whole processes …")
        print_process_table(process_times(tree, files, work, args.repeat, args.repeat_cold), args.repeat)
        print(f"load average (1/5/15 min) after: {_load()}")
        return 0 if same else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
