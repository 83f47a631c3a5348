"""Match latency: errkb's index against a naive baseline, side by side, in one process.

    .venv/bin/python bench/match_bench.py [--pastes 200] [--scales 1,10,100]

Pastes are made from real harvested sites with their placeholders filled in and wrapped in
log noise (prefixes, colours, traceback frames, unrelated lines). At each scale the dataset
is grown with synthetic templates (real ones with one word changed, so they compete for the
same words). The naive baseline (`MatchIndex.match(..., exhaustive=True)`) runs every
template's search pattern in turn, all compiled up front, and ranks with the same scoring;
errkb's index narrows to a few candidates first. Top-1 agreement is the share of pastes where
both return the same first id.
"""

from __future__ import annotations

import argparse
import re
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from errkb import templates  # noqa: E402
from errkb.dataset import Dataset  # noqa: E402
from errkb.match import MatchIndex  # noqa: E402
from errkb.model import Occurrence, Site  # noqa: E402

VALUES = ["128", "256", "88", "4", "torch.bfloat16", "torch.float8_e4m3fn", "(2, 4096, 32, 128)", "sm90", "9.0",
          "FLASH_ATTN", "cuda:0", "True", "None", "64", "page_size=16"]
PREFIXES = ["", "ERROR 11-29 10:23:40 [engine.py:366] ", "[rank3]: ", "(EngineCore_DP0 pid=4242) ",
            "[2026-11-29 10:23:40 TP0] ", "\x1b[31m"]
NOISE = ["INFO 11-29 10:23:39 [model_runner.py:120] Loading weights took 12.3 GB",
         "[2026-11-29 10:23:39 TP0] Capture cuda graph begin. This can take up to several minutes.",
         "WARNING 11-29 10:23:38 [config.py:88] Casting torch.float32 to torch.bfloat16."]
FRAMES = {"sglang": "/opt/venv/lib/python3.12/site-packages/sglang/srt/layers/attention/flashattention_backend.py",
          "vllm": "/opt/venv/lib/python3.12/site-packages/vllm/v1/attention/backends/flash_attn.py",
          "flashinfer-python": "/opt/venv/lib/python3.12/site-packages/flashinfer/prefill.py",
          "flash-attn-4": "/opt/venv/lib/python3.12/site-packages/flash_attn/cute/interface.py"}


def make_paste(site: Site, rng: random.Random) -> str:
    values = {name: rng.choice(VALUES) for name in templates.placeholders(site.template)}
    message = templates.render(site.template, values)
    lines = rng.sample(NOISE, rng.randint(0, 2))
    frame = FRAMES.get(site.package, "/opt/venv/lib/python3.12/site-packages/torch/nn/functional.py")
    lines += ["Traceback (most recent call last):", f'  File "{frame}", line {rng.randint(10, 2000)}, in forward',
              "    out = attn(q, k, v)"]
    lines.append(f"{rng.choice(PREFIXES)}{site.error_class or 'RuntimeError'}: {message}")
    return "\n".join(lines)


def synthetic_sites(sites: list[Site], copies: int, rng: random.Random) -> list[Site]:
    """`copies` variants of every site, each with one literal word replaced."""
    out = []
    for k in range(copies):
        for site in sites:
            words = re.findall(r"[A-Za-z]{4,}", templates.literal_text(site.template))
            if not words:
                continue
            word = rng.choice(words)
            template = site.template.replace(word, f"{word}x{k}q", 1)
            path = f"synthetic/{k}/{site.path}"
            out.append(replace_site(site, template, path))
    return out


def replace_site(site: Site, template: str, path: str) -> Site:
    return Site(id=Site.make_id("synthetic", path, template), package="synthetic", path=path, language=site.language,
                kind=site.kind, error_class=site.error_class, template=template, function=site.function,
                occurrences=[Occurrence(version="0", lines=[1])])


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def run_scale(base: Dataset, scale: int, pastes: list[str], naive_n: int, rng: random.Random) -> dict:
    real = list(base.sites.values())
    extra = synthetic_sites(real, scale - 1, rng) if scale > 1 else []
    ds = replace(base, sites={**base.sites, **{s.id: s for s in extra}})
    t0 = time.perf_counter()
    index = MatchIndex(ds)
    build_s = time.perf_counter() - t0
    for p in pastes:  # compile the patterns candidates need once, as a warm server would have
        index.match(p)

    ours, ours_top = [], []
    for p in pastes:
        t = time.perf_counter()
        hits = index.match(p, limit=1)
        ours.append(time.perf_counter() - t)
        ours_top.append(hits[0].id if hits else None)

    for entry in index.entries:  # the baseline's patterns, compiled up front
        entry.pattern
    naive, agree = [], 0
    for p, mine in zip(pastes[:naive_n], ours_top):
        t = time.perf_counter()
        hits = index.match(p, limit=1, exhaustive=True)
        naive.append(time.perf_counter() - t)
        agree += (hits[0].id if hits else None) == mine
    distinct = len(index.entries)
    return {"scale": scale, "templates": distinct, "build_s": build_s,
            "ours_p50": statistics.median(ours), "ours_p99": percentile(ours, 0.99),
            "naive_p50": statistics.median(naive), "naive_p99": percentile(naive, 0.99),
            "naive_n": len(naive), "agree": agree / len(naive)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pastes", type=int, default=200)
    parser.add_argument("--scales", default="1,10,100")
    parser.add_argument("--naive", default="200,40,8", help="pastes the naive baseline runs at each scale")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    base = Dataset.load()
    pool = [s for s in base.sites.values() if len(templates.literal_text(s.template)) >= 20]
    pastes = [make_paste(s, rng) for s in rng.sample(pool, args.pastes)]
    scales = [int(x) for x in args.scales.split(",")]
    naive_ns = [int(x) for x in args.naive.split(",")]

    print(f"{len(pastes)} pastes; times per paste in ms\n")
    print("| scale | templates | index build s | errkb p50 | errkb p99 | naive p50 | naive p99 | speed-up p50 | top-1 agree (naive n) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for scale, naive_n in zip(scales, naive_ns + [naive_ns[-1]] * len(scales)):
        r = run_scale(base, scale, pastes, naive_n, rng)
        print(f"| {r['scale']}x | {r['templates']} | {r['build_s']:.1f} | {r['ours_p50'] * 1e3:.2f} | "
              f"{r['ours_p99'] * 1e3:.2f} | {r['naive_p50'] * 1e3:.1f} | {r['naive_p99'] * 1e3:.1f} | "
              f"{r['naive_p50'] / r['ours_p50']:.0f}x | {r['agree'] * 100:.0f}% ({r['naive_n']}) |", flush=True)


if __name__ == "__main__":
    main()
