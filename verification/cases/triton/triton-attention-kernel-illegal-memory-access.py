"""A Triton decode-attention kernel that gathers its keys and values through an index table, given
one index far outside the KV cache: the kernel faults (CUDA_ERROR_ILLEGAL_ADDRESS), and the next
Triton launch reports it as "Triton Error [CUDA]: an illegal memory access was encountered".

Each step runs in a child process (the fault leaves its CUDA context unusable). After the faulting
launch the child waits for the GPU through the driver (cuCtxSynchronize via ctypes, whose error
code it prints instead of raising), so the second, valid launch always finds the sticky error:
the order of events the record describes, without depending on timing. Fix 1 runs the same child
with CUDA_LAUNCH_BLOCKING=1, where the record says the report moves to the launch that faulted.
Fix 2 (another SGLang attention backend) is a server option: skipped."""

from errkb.verify.case import Refuted
from verification.cases import _child, _venv
from verification.cases._common import TOL, ref_attention

REQUIRES = {"cuda": True, "packages": ["torch", "triton"]}
TIMEOUT = 300

CHILD = r'''
import ctypes, sys
import torch, triton, triton.language as tl


@triton.jit
def paged_decode(Q, KCache, VCache, KvIdx, O, scale, N: tl.constexpr, D: tl.constexpr):
    # one program per sequence: its one query row against N cached rows picked by KvIdx
    i = tl.program_id(0)
    n = tl.arange(0, N)
    d = tl.arange(0, D)
    idx = tl.load(KvIdx + i * N + n).to(tl.int64)
    q = tl.load(Q + i * D + d).to(tl.float32)
    k = tl.load(KCache + idx[:, None] * D + d[None, :]).to(tl.float32)
    v = tl.load(VCache + idx[:, None] * D + d[None, :]).to(tl.float32)
    s = tl.sum(k * q[None, :], axis=1) * scale
    p = tl.exp(s - tl.max(s, axis=0))
    p = p / tl.sum(p, axis=0)
    tl.store(O + i * D + d, tl.sum(p[:, None] * v, axis=0).to(O.dtype.element_ty))


B, N, D, SLOTS = 4, 16, 64, 256
torch.manual_seed(0)
q = torch.randn(B, D, device="cuda", dtype=torch.float16)
kc, vc = (torch.randn(SLOTS, D, device="cuda", dtype=torch.float16) for _ in range(2))
idx = torch.randint(0, SLOTS, (B, N), device="cuda", dtype=torch.int32)
if sys.argv[2] == "bad":
    idx[1, 3] = 1 << 30  # a slot far beyond the cache's 256 rows
out, out2 = torch.empty_like(q), torch.empty_like(q)
idx_ok = idx.clamp(0, SLOTS - 1)  # made before the fault: the next CUDA call after it is Triton's launch
torch.cuda.synchronize()
print("errkb: launch 1 (the faulting kernel)", flush=True)
paged_decode[(B,)](q, kc, vc, idx, out, D ** -0.5, N=N, D=D)
rc = ctypes.CDLL("libcuda.so.1").cuCtxSynchronize()
print(f"errkb: cuCtxSynchronize returned {rc}", flush=True)
print("errkb: launch 2 (a valid kernel)", flush=True)
paged_decode[(B,)](q, kc, vc, idx_ok, out2, D ** -0.5, N=N, D=D)
torch.cuda.synchronize()
torch.save({"q": q.cpu(), "k": kc.cpu(), "v": vc.cpu(), "idx": idx.cpu(), "out": out.cpu()}, sys.argv[1])
print("errkb: ran", flush=True)
'''


def _run(ctx, mode: str, **env):
    res, saved = _child.run(ctx, CHILD.replace('sys.argv[2]', repr(mode)), f"triton-ima-{mode}-{len(env)}", env=env)
    launched = [line for line in res.output.splitlines() if line.startswith("errkb: launch")]
    synced = _child.printed(res.output, "errkb: cuCtxSynchronize returned")
    ctx.note(f"{mode} indices{' ' + str(env) if env else ''}: launches started {len(launched)}, "
             f"cuCtxSynchronize {synced or 'not reached'}; {_venv.last_exception(res.output, 200) if res.returncode else 'ran'}")
    return res, saved, len(launched)


def reproduce(ctx):
    res, _, launched = _run(ctx, "bad")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])
    if launched != 2:
        raise RuntimeError(f"the report came at launch {launched}, not at the valid launch after the fault")


def fix_1(ctx):
    # CUDA_LAUNCH_BLOCKING=1: the same message, raised by the launch of the kernel that faulted
    res, _, launched = _run(ctx, "bad", CUDA_LAUNCH_BLOCKING="1")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])
    if launched != 1:
        raise Refuted(f"with CUDA_LAUNCH_BLOCKING=1 the report still came at launch {launched}, not at the faulting one")


def fix_2(ctx):
    ctx.skip("switching SGLang's --attention-backend is a server option, not a call")


def control(ctx):
    res, saved, _ = _run(ctx, "good")
    if saved is None:
        ctx.call(_venv.reraise, res.output)
        raise RuntimeError(f"the child neither ran nor printed an exception: {res.tail(600)}")
    k = saved["k"][saved["idx"].long()].float()  # (B, N, D): each sequence's gathered rows
    v = saved["v"][saved["idx"].long()].float()
    ref = ref_attention(saved["q"].float()[:, None, None, :], k[:, :, None, :], v[:, :, None, :])[:, 0, 0, :]
    ctx.close(saved["out"], ref, **TOL)
