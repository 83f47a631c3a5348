"""Probe (not a case): which FlashAttention-4 releases compile which SM90 backward and block-sparse
calls. Each (release, test) pair runs in a subprocess of its own whose path puts that release's
pure-Python `flash_attn.cute` ahead of the installed one (same CuTe DSL), so a crash or hang costs
one line. Prints one JSON line per pair: ok, or the exception's class, module, message and the
last frames' files.

    python3 verification/device/probes/fa4_sm90_releases.py OLD_DIR [OLD_DSL]

OLD_DIR holds release wheels and source trees (verification/device/fa4-old-releases.sh); OLD_DSL
is the folders of an older nvidia-cutlass-dsl (its `python_packages`) and of the quack of its time,
joined by ':', which releases before 4.0.0b5 need: they do not import under the 4.8 DSL
(`cutlass.cute.core` has no `ThrMma` there). Run on an H100 on 2026-12-07 with
OLD_DSL=/root/cdsl441/nvidia_cutlass_dsl/python_packages:.gpu/fa4old/quack-0.2.10; what it printed
is summarized in docs/verification.md.
"""
import json
import os
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor

CHILD = r'''
import json, re, sys, traceback
import torch
test = sys.argv[1]
out = {"test": test}
try:
    import flash_attn.cute as pkg
    out["from"] = pkg.__file__
    torch.manual_seed(0)
    dev, dt = "cuda", torch.bfloat16

    def dense(d, dv, causal, hq=4, hk=4, s=512):
        from flash_attn.cute import flash_attn_func
        q = torch.randn(1, s, hq, d, device=dev, dtype=dt, requires_grad=True)
        k = torch.randn(1, s, hk, d, device=dev, dtype=dt, requires_grad=True)
        v = torch.randn(1, s, hk, dv, device=dev, dtype=dt, requires_grad=True)
        o = flash_attn_func(q, k, v, causal=causal)
        o = o[0] if isinstance(o, tuple) else o
        o.sum().backward()

    def flex(d, hq, hk, backward):
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        s = 512
        bm = create_block_mask(lambda b, h, qi, ki: qi >= ki, 1, 1, s, s, device=dev)
        q = torch.randn(1, hq, s, d, device=dev, dtype=dt, requires_grad=backward)
        k = torch.randn(1, hk, s, d, device=dev, dtype=dt, requires_grad=backward)
        v = torch.randn(1, hk, s, d, device=dev, dtype=dt, requires_grad=backward)
        f = torch.compile(flex_attention)
        o = f(q, k, v, block_mask=bm, enable_gqa=hq != hk, kernel_options={"BACKEND": "FLASH"})
        if backward:
            o.sum().backward()

    {
        "bwd-192-128": lambda: dense(192, 128, False),
        "bwd-192-128-causal": lambda: dense(192, 128, True),
        "bwd-64": lambda: dense(64, 64, False),
        "bwd-128": lambda: dense(128, 128, False),
        "bwd-192": lambda: dense(192, 192, False),
        "flex-flash-bwd-64": lambda: flex(64, 4, 4, True),
        "flex-flash-gqa-40-4": lambda: flex(128, 40, 4, False),
    }[test]()
    torch.cuda.synchronize()
    out["ok"] = True
except BaseException as exc:
    out.update(ok=False, cls=type(exc).__name__, module=type(exc).__module__,
               msg=" ".join(str(exc).split())[:900],
               frames=[f"{f.filename.split('site-packages/')[-1]}:{f.lineno}" for f in traceback.extract_tb(exc.__traceback__)[-4:]])
    cause = exc.__cause__ or exc.__context__
    if cause is not None:
        out["cause"] = f"{type(cause).__name__}: {' '.join(str(cause).split())[:400]}"
print("PROBE " + json.dumps(out), flush=True)
'''

PLAN = {  # (release, DSL) -> tests; "old" is OLD_DSL
    ("installed", "installed"): ["bwd-192", "bwd-192-128-causal"],
    ("4.0.0b4", "old"): ["bwd-192-128", "bwd-192-128-causal", "bwd-64", "bwd-128", "bwd-192",
                         "flex-flash-bwd-64", "flex-flash-gqa-40-4"],
    ("4.0.0b5", "old"): ["bwd-192-128", "bwd-64", "bwd-192", "flex-flash-bwd-64"],
    ("main-9d871f9f", "old"): ["flex-flash-gqa-40-4", "bwd-192-128"],
}


def release_path(old_dir: str, release: str) -> str | None:
    """The folder to put first on the path for `release` (a wheel is unpacked once)."""
    if release == "installed":
        return None
    src = os.path.join(old_dir, release)
    if os.path.isdir(src):
        return src
    wheel = os.path.join(old_dir, f"flash_attn_4-{release}-py3-none-any.whl")
    target = os.path.join("/tmp/fa4-probe", release)
    if not os.path.isdir(target):
        zipfile.ZipFile(wheel).extractall(target)
    return target


def one(old_dir: str, old_dsl: str | None, release: str, dsl: str, test: str) -> None:
    path = release_path(old_dir, release)
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=f"/tmp/fa4-probe-ind/{release}-{test}")
    paths = env.get("PYTHONPATH", "").split(os.pathsep)
    if dsl == "old":  # the older DSL instead of the installed one (whose folder ends in dsl_packages)
        if not old_dsl:
            print(json.dumps({"release": release, "dsl": dsl, "test": test, "ok": None, "err": "no OLD_DSL"}), flush=True)
            return
        paths = [old_dsl] + [p for p in paths if not p.rstrip("/").endswith("dsl_packages")]
    env["PYTHONPATH"] = os.pathsep.join(([path] if path else []) + paths)
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, test], capture_output=True, text=True, env=env, timeout=400)
        lines = [l[6:] for l in p.stdout.splitlines() if l.startswith("PROBE ")]
        res = json.loads(lines[-1]) if lines else {"test": test, "ok": None, "rc": p.returncode, "err": p.stderr[-900:]}
    except subprocess.TimeoutExpired:
        res = {"test": test, "ok": None, "timeout": 400}
    print(json.dumps({"release": release, "dsl": dsl, **res}), flush=True)


if __name__ == "__main__":
    old, old_dsl = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
    for release, _ in PLAN:  # unpack each wheel once, before the workers start
        release_path(old, release)
    jobs = [(old, old_dsl, r, d, t) for (r, d), tests in PLAN.items() for t in tests]
    with ThreadPoolExecutor(int(os.environ.get("PROBE_JOBS", "6"))) as pool:
        list(pool.map(lambda a: one(*a), jobs))
