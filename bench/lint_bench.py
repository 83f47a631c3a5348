"""Benchmark `errkb lint` on a large real tree, side by side in one run.

    .venv/bin/python bench/lint_bench.py                       # SGLang 0.5.23's python package
    .venv/bin/python bench/lint_bench.py --tree path/to/src    # any other tree
    .venv/bin/python bench/lint_bench.py --no-fixit            # skip the (slow) Fixit column

Modes: libcst parse-only of every file; Fixit 2 with one import-resolving rule equivalent to
EKB102 (needs `pip install fixit` in the venv; it is not an errkb dependency); errkb lint cold
(fresh cache, 1 process), warm (same cache, 1 process) and cold on 2 processes. errkb's findings
must be identical in every mode; Fixit's count is shown next to EKB102's.
"""

from __future__ import annotations

import argparse
import glob
import shutil
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


def errkb_run(tree: Path, cache: Path | None, jobs: int):
    from errkb import layout
    from errkb.lint.config import Config
    from errkb.lint.rule import all_rules
    from errkb.lint.runner import lint_paths
    from errkb.lint.table import RecordTexts

    cfg = Config(root=tree.parent, cache_dir=cache)
    rules = all_rules()
    texts = RecordTexts(layout.default_data_dir(), {r for cls in rules.values() for r in cls.RECORDS})
    t = time.perf_counter()
    run = lint_paths([tree], cfg, list(rules), texts, jobs=jobs, use_cache=cache is not None)
    return time.perf_counter() - t, run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", type=Path, help="lint this folder instead of the SGLang wheel's package")
    ap.add_argument("--wheel", default=DEFAULT_WHEEL, help="wheel glob, relative to the repo")
    ap.add_argument("--no-fixit", action="store_true")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)

    work = Path(tempfile.mkdtemp(prefix="errkb-lint-bench-"))
    try:
        tree = args.tree.resolve() if args.tree else tree_from_wheel(args.wheel, work)
        files = sorted(p for p in tree.rglob("*.py") if p.is_file())
        size = sum(p.stat().st_size for p in files)
        print(f"tree: {tree} — {len(files)} Python files, {size / 1e6:.1f} MB")

        rows = []
        print("running: libcst parse-only …")
        t_parse, failed = parse_only(files)
        rows.append(("libcst parse-only, every file", t_parse, f"{failed} unparsable"))
        runs = {}
        cache = work / "cache"
        print("running: errkb lint cold, warm, 2 processes, cache off …")
        t, runs["cold"] = errkb_run(tree, cache, 1)
        rows.append(("errkb lint cold (1 process)", t, None))
        t, runs["warm"] = errkb_run(tree, cache, 1)
        rows.append(("errkb lint warm cache (1 process)", t, None))
        t, runs["cold-2"] = errkb_run(tree, work / "cache2", 2)
        rows.append(("errkb lint cold, 2 processes", t, None))
        t, runs["no-cache"] = errkb_run(tree, None, 1)
        rows.append(("errkb lint, cache off (1 process)", t, None))
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
              f"2 processes vs 1: {cold / rows[3][1]:.2f}×", end="")
        fixit = [r for r in rows if r[0].startswith("Fixit")]
        if fixit:
            print(f"; Fixit / errkb cold: {fixit[0][1] / cold:.1f}×", end="")
        print()
        print(f"identical findings in every errkb mode: {same}")
        skipped = runs["cold"].skipped
        if skipped:
            print(f"skipped files: {len(skipped)} ({'; '.join(f'{r.path}: {r.skipped}' for r in skipped[:3])})")
        return 0 if same else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
