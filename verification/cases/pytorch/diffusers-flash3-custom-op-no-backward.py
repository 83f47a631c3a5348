"""diffusers' `_flash_3` attention backend under autograd: "Trying to backward through
_diffusers_flash_attn_3._flash_attn_forward.default but no autograd formula was registered. ...".

What runs: diffusers 0.36.0 from PyPI (`pip --target`, with its dependencies) next to with_cpu_torch()'s
torch (2.13.0+cpu, local wheel), offline. In 0.36.0, diffusers/models/attention_dispatch.py registers the
operator `_diffusers_flash_attn_3::_flash_attn_forward` with torch.library.custom_op at import, whatever is
installed (CUDA kernel only, plus a fake implementation); FlashAttention-3 itself is not installed, nothing is
stood in, and FA3's kernel is never reached.

Reproduce: the function diffusers registers for the `_flash_3` backend (its attention registry's entry) is
called on bf16 tensors on the `meta` device that require grad: the operator dispatches to its fake (shape)
implementation, so the forward pass needs no GPU and returns an output with a grad_fn; `backward()` then
raises the record's RuntimeError from torch's autograd node (torch/_library/autograd.py). The node is the
same whatever device the forward ran on; the step does not go through `set_attention_backend('_flash_3')`,
which refuses first here because FA3 is not installed (noted). Fix 1: a tiny FluxTransformer2DModel (one
double and one single block, 2 heads of 16) with `set_attention_backend("native")` runs forward and
backward on the CPU with finite gradients, and the native backend's output and input gradients through
dispatch_attention_fn are within 1e-5 of a float64 softmax attention. Fix 2 (FA3's own flash_attn_func)
needs FlashAttention-3 on a Hopper GPU: skipped."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
DIFFUSERS = "diffusers==0.36.0"
TOL = 1e-5

REPRO = r"""
import torch, diffusers
from diffusers.models import attention_dispatch as ad
print('ERRKB-VERSIONS diffusers', diffusers.__version__, 'torch', torch.__version__, 'FA3 usable',
      ad._CAN_USE_FLASH_ATTN_3, 'op registered', hasattr(torch.ops._diffusers_flash_attn_3, '_flash_attn_forward'),
      flush=True)
try:
    ad._check_attention_backend_requirements(ad.AttentionBackendName._FLASH_3)
except RuntimeError as e:
    print('ERRKB-SET-REFUSED', e, flush=True)
fn = ad._AttentionBackendRegistry._backends[ad.AttentionBackendName._FLASH_3]
q, k, v = (torch.randn(1, 16, 2, 64, device='meta', dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
out = fn(q, k, v)
print('ERRKB-FORWARD', fn.__name__, tuple(out.shape), out.device, type(out.grad_fn).__name__, flush=True)
out.float().sum().backward()
print('ERRKB-BACKWARD', flush=True)
"""

FIX_1 = r"""
import torch, diffusers
from diffusers import FluxTransformer2DModel
from diffusers.models import attention_dispatch as ad
torch.manual_seed(0)
m = FluxTransformer2DModel(patch_size=1, in_channels=4, out_channels=4, num_layers=1, num_single_layers=1,
                           attention_head_dim=16, num_attention_heads=2, joint_attention_dim=32,
                           pooled_projection_dim=32, axes_dims_rope=(4, 6, 6))
m.set_attention_backend("native")
out = m(hidden_states=torch.randn(1, 8, 4), encoder_hidden_states=torch.randn(1, 5, 32),
        pooled_projections=torch.randn(1, 32), timestep=torch.tensor([0.5]), img_ids=torch.zeros(8, 3),
        txt_ids=torch.zeros(5, 3)).sample
out.square().mean().backward()
grads = [p.grad for p in m.parameters() if p.requires_grad]
print('ERRKB-MODEL', tuple(out.shape), sum(g is not None for g in grads), len(grads),
      all(g is not None and bool(torch.isfinite(g).all()) for g in grads), flush=True)
q, k, v = (torch.randn(2, 16, 2, 32, requires_grad=True) for _ in range(3))
o = ad.dispatch_attention_fn(q, k, v, backend=ad.AttentionBackendName.NATIVE)
w = torch.randn_like(o)
gq, gk, gv = torch.autograd.grad((o * w).sum(), (q, k, v))
qd, kd, vd = (t.detach().double().transpose(1, 2).requires_grad_() for t in (q, k, v))
ref = (torch.softmax(qd @ kd.transpose(-1, -2) / 32 ** 0.5, -1) @ vd).transpose(1, 2)
rq, rk, rv = torch.autograd.grad((ref * w.double()).sum(), (qd, kd, vd))
err = max(float((o.double() - ref).abs().max()), *(float((a.double() - r.transpose(1, 2)).abs().max())
          for a, r in ((gq, rq), (gk, rk), (gv, rv))))
print('ERRKB-NATIVE', err, flush=True)
"""

_runs: dict = {}


def _run(ctx, name: str, code: str) -> _venv.Run:
    if name not in _runs:
        env = b.with_cpu_torch(ctx)
        _venv.noted(ctx, env)
        folder = b.target_dir(ctx, DIFFUSERS, env=env)
        _runs[name] = b.run_with_torch(ctx, code, env=env, path=[folder], extra_env={"HF_HUB_OFFLINE": "1"})
    res = _runs[name]
    ctx.note(f"{name}: " + " | ".join(l for l in res.output.splitlines() if l.startswith("ERRKB-"))[:500]
             + f" | {_venv.last_exception(res.output, 200)}")
    if "ERRKB-VERSIONS" not in res.output and name == "reproduce":
        ctx.skip(f"diffusers did not import here: {res.tail(400)}")
    return res


def reproduce(ctx):
    res = _run(ctx, "reproduce", REPRO)

    def backward():
        if "ERRKB-FORWARD _flash_attention_3" not in res.output:
            _venv.reraise(res.output)
            raise AssertionError(f"the forward pass did not return: {res.tail(400)}")
        _venv.reraise(res.output)
    ctx.expect_error(backward)


def fix_1(ctx):
    res = _run(ctx, "fix_1", FIX_1)

    def native():
        _venv.reraise(res.output)
        line = next((l for l in res.output.splitlines() if l.startswith("ERRKB-MODEL")), None)
        if line is None or not line.endswith("True"):
            raise AssertionError(f"the model's backward pass did not give finite gradients: {res.tail(400)}")
        _venv.within(ctx, res, "ERRKB-NATIVE", "native backend vs float64", TOL)
    ctx.call(native)


def fix_2(ctx):
    ctx.skip("FA3's own flash_attn_func (flash_attn_interface) needs FlashAttention-3 built for a Hopper GPU")
