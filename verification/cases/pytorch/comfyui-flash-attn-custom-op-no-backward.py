"""ComfyUI's `--use-flash-attention` operator under autograd: "Trying to backward through
flash_attention.flash_attn.default but no autograd formula was registered. ...".

What runs: ComfyUI's `comfy` package from Comfy-Org/ComfyUI at a125cd8 (v0.3.64), exported from a local clone
(verification/cases/_comfyui.py: torch 2.13.0+cpu, local wheel, and the part of ComfyUI's requirements its
modules import), started as main.py does with `--use-flash-attention --cpu`. comfy/ldm/modules/attention.py
registers its operator `flash_attention::flash_attn` (torch.library.custom_op, a fake implementation, no
autograd formula) only after `from flash_attn import flash_attn_func` succeeds (else it exits). So flash-attn
2.8.3's Python package is installed (`pip --target` of a wheel built from its PyPI sdist with
FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE) and its compiled module flash_attn_2_cuda, not built here, is an errkb
stand-in (errkb.verify.standin): importing works, calling anything from it raises. The steps never call it:

Reproduce: ComfyUI's optimized_attention (attention_flash with this flag) is called on tensors on the `meta`
device that require grad, so the operator dispatches to ComfyUI's fake (shape) implementation, not to
flash_attn_func; the step checks that ComfyUI's forward-only fallback ('Flash Attention failed, using default
SDPA') was not logged, i.e. the output came from the operator. `backward()` then raises the record's
RuntimeError from torch's autograd node, outside ComfyUI's try/except. The node is the same whatever device
the forward ran on. Fix 1: started with `--use-pytorch-cross-attention --cpu` (flash-attn still installed),
the same call on CPU tensors runs forward and backward; output and input gradients are within 1e-5 of a
float64 softmax attention. Fix 2 (a second instance for sampling with flash-attn) needs flash-attn on a GPU:
skipped."""

from pathlib import Path

from verification.cases import _builds as b
from verification.cases import _comfyui, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
COMMIT = "a125cd84b054a57729b5eecab930ca9408719832"  # v0.3.64
FLASH_ATTN = "2.8.3"
TOL = 1e-5

CODE = r"""
import logging, torch
logging.basicConfig(level=logging.INFO)
sys.path.append(ERRKB_ROOT)
from errkb.verify.standin import install, is_standin
try:
    import flash_attn_2_cuda
except ImportError:
    install("flash_attn_2_cuda")
import flash_attn
import comfy.ldm.modules.attention as A
print('ERRKB-ENV flash-attn', flash_attn.__version__, 'flash_attn_2_cuda stood in', is_standin(sys.modules['flash_attn_2_cuda']),
      'optimized_attention', A.optimized_attention.__name__, 'op registered', hasattr(torch.ops.flash_attention, 'flash_attn'),
      flush=True)
DEVICE = MODE
torch.manual_seed(0)
q, k, v = (torch.randn(2, 16, 64, device=DEVICE, requires_grad=True) for _ in range(3))
out = A.optimized_attention(q, k, v, heads=4)
print('ERRKB-FORWARD', tuple(out.shape), out.device, type(out.grad_fn).__name__, flush=True)
w = torch.randn_like(out)
grads = torch.autograd.grad((out * w).sum(), (q, k, v))
print('ERRKB-BACKWARD', flush=True)
if DEVICE == 'cpu':
    qd, kd, vd = (t.detach().double().view(2, 16, 4, 16).transpose(1, 2).requires_grad_() for t in (q, k, v))
    ref = (torch.softmax(qd @ kd.transpose(-1, -2) / 16 ** 0.5, -1) @ vd).transpose(1, 2).reshape(2, 16, 64)
    rgrads = torch.autograd.grad((ref * w.double()).sum(), (qd, kd, vd))
    err = max(float((out.double() - ref).abs().max()),
              *(float((g.double() - r.transpose(1, 2).reshape(2, 16, 64)).abs().max()) for g, r in zip(grads, rgrads)))
    print('ERRKB-ERR', err, flush=True)
"""

_runs: dict = {}


def _run(ctx, flag: str, device: str) -> _venv.Run:
    key = (flag, device)
    if key not in _runs:
        env = _comfyui.env(ctx)
        wheel = b.flash_attn_python_wheel(ctx, FLASH_ATTN, env=env)
        folder = _venv._tmp_root() / f"target-flash-attn-{FLASH_ATTN}-python"
        if not (folder / ".errkb-done").exists():
            res = env.pip("install", "--no-deps", "--target", folder, wheel, timeout=900)
            if res.returncode != 0:
                ctx.skip(f"could not install {wheel}: {res.tail(300)}")
            (folder / ".errkb-done").write_text(wheel)
        root = str(Path(__file__).resolve().parents[3])
        code = CODE.replace("ERRKB_ROOT", repr(root)).replace("= MODE", f"= {device!r}")
        _runs[key] = _comfyui.run(ctx, code, COMMIT, (flag, "--cpu"), path=[folder])
    res = _runs[key]
    ctx.note(f"{flag} on {device} tensors: " + " | ".join(l for l in res.output.splitlines() if l.startswith("ERRKB-")
                                                           or "Flash Attention" in l)[:500])
    if "ERRKB-ENV" not in res.output:
        _venv.reraise(res.output)
        raise AssertionError(f"ComfyUI's attention module did not import: {res.tail(400)}")
    return res


def reproduce(ctx):
    res = _run(ctx, "--use-flash-attention", "meta")

    def backward():
        if "stood in True" in res.output:
            ctx.note("flash_attn_2_cuda was an errkb stand-in (never called: the forward ran on meta tensors)")
        if ("optimized_attention attention_flash" not in res.output or "op registered True" not in res.output
                or "ERRKB-FORWARD" not in res.output):
            _venv.reraise(res.output)
            raise AssertionError(f"the flash path did not run: {res.tail(400)}")
        if "Flash Attention failed" in res.output:
            raise AssertionError(f"ComfyUI fell back to SDPA in the forward pass: {res.tail(400)}")
        _venv.reraise(res.output)
    ctx.expect_error(backward)


def fix_1(ctx):
    res = _run(ctx, "--use-pytorch-cross-attention", "cpu")

    def works():
        _venv.reraise(res.output)
        if "optimized_attention attention_pytorch" not in res.output or "ERRKB-BACKWARD" not in res.output:
            raise AssertionError(f"the PyTorch attention path did not run forward and backward: {res.tail(400)}")
        _venv.within(ctx, res, "ERRKB-ERR", "attention_pytorch vs float64 (output and input gradients)", TOL)
    ctx.call(works)


def fix_2(ctx):
    ctx.skip("the sampling instance's flash-attn path (flash_attn_func) needs flash-attn built for a CUDA GPU")
