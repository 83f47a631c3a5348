"""Probe (not a case): which decode-shaped FlexAttention calls make Inductor find no Triton config
that fits the H200's shared memory. One subprocess per shape,
so a hang or crash costs one line. Prints one JSON line per shape."""
import json, os, subprocess, sys

SHAPES = [  # (sq, sk, d, dtype, hq, hk)
    (1, 4096, 512, "float32", 8, 8), (1, 4096, 512, "bfloat16", 8, 8), (1, 4096, 256, "float32", 8, 8),
    (16, 4096, 512, "float32", 32, 8),
]
CHILD = r'''
import sys, json, torch
from torch.nn.attention.flex_attention import flex_attention
sq, sk, d, dt, hq, hk = json.loads(sys.argv[1]); dt = getattr(torch, dt)
q = torch.randn(1, hq, sq, d, device="cuda", dtype=dt); k = torch.randn(1, hk, sk, d, device="cuda", dtype=dt); v = torch.randn_like(k)
f = torch.compile(flex_attention, dynamic=False)
try:
    o = f(q, k, v, enable_gqa=hq != hk); torch.cuda.synchronize(); print(json.dumps({"ok": True}))
except Exception as e:
    print(json.dumps({"ok": False, "cls": type(e).__name__, "msg": str(e)[:1500]}))
'''
def one(shape):
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, json.dumps(shape)], capture_output=True, text=True, timeout=150)
        line = (p.stdout.strip().splitlines() or [json.dumps({"ok": None, "rc": p.returncode, "err": p.stderr[-800:]})])[-1]
    except subprocess.TimeoutExpired:
        line = json.dumps({"ok": None, "timeout": 150})
    print(json.dumps({"shape": shape, **json.loads(line)}), flush=True)


from concurrent.futures import ThreadPoolExecutor
with ThreadPoolExecutor(4) as pool:
    list(pool.map(one, SHAPES))
