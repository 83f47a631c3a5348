"""flash-attention's csrc/layer_norm extension (dropout_layer_norm) run on a GPU it has no code for: its
CHECK_CUDA helper prints `CUDA Error: invalid device function <file> <line>` at the occupancy query before
the forward kernel's first launch (ln_fwd_kernels.cuh:236) and exits, with no Python traceback.

The extension is v2.8.3's, built on a CPU machine by the .gpu/v11 builder (docs/verification.md) with the arch flags
its own setup.py makes (carried in .gpu/v11; sources ln_api.cpp and ln_fwd_256.cu, so hidden size 256):
`ln-old-toolkit` holds what setup.py compiles under an nvcc older than 11.8 (sm_80 machine code, no sm_90;
its sm_70 pair is left out in both builds because nvcc 13 cannot compile for Volta), `ln-setup-sm90` what it
compiles under nvcc >= 11.8 (adds sm_90). The steps call flash_attn/ops/layer_norm.py of v2.8.3 (the wrapper
users import, loaded from its file with the built module as `dropout_layer_norm`), each in a child
process, since the helper calls exit().

reproduce (SM90): the old-toolkit build: the record's line, its file ln_fwd_kernels.cuh and line 236.
fix 1 (CPU): without dropout_layer_norm, Qwen-1's remote code falls back to its PyTorch RMSNorm and the
model runs (verification/cases/_qwen.py: flash-attn not installed; the norm matches fp64).
fix 2 (SM90): the build with setup.py's sm_90 pair: layer_norm runs and matches float32 F.layer_norm; the
build log (BUILD.txt, noted) shows torch's cpp_extension adding no arch flags of its own for these flags
though TORCH_CUDA_ARCH_LIST was set (the meaning's claim)."""

from errkb.verify.case import Refuted
from verification.cases import _carried, _child, _qwen, _venv

BACKEND = "flash-attn"
REQUIRES = {"cuda": False}
STEP_REQUIRES = {"reproduce": {"cuda": True, "arch": "sm90", "packages": ["torch"]},
                 "fix_2": {"cuda": True, "arch": "sm90", "packages": ["torch"]}}
TIMEOUT = 1500

CHILD = r'''
import importlib.util, sys
import torch
sys.path.insert(0, SO_DIR)
import dropout_layer_norm  # the built extension, as the wrapper imports it
spec = importlib.util.spec_from_file_location("flash_attn_ops_layer_norm", WRAPPER)
ln = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ln)
torch.manual_seed(0)
x = torch.randn(64, 256, device="cuda", dtype=torch.float16)
w = torch.randn(256, device="cuda", dtype=torch.float16)
b = torch.randn(256, device="cuda", dtype=torch.float16)
print("errkb: calling flash_attn.ops.layer_norm.layer_norm", flush=True)
out = ln.layer_norm(x, w, b, 1e-5)
torch.cuda.synchronize()
torch.save({"x": x.cpu(), "w": w.cpu(), "b": b.cpu(), "out": out.cpu()}, sys.argv[1])
print("errkb: ran", flush=True)
'''


def _run(ctx, build: str):
    so = _carried.path(ctx, build)
    wrapper = _carried.path(ctx, "flash_attn_ops_layer_norm.py")
    code = CHILD.replace("SO_DIR", repr(str(so))).replace("WRAPPER", repr(str(wrapper)))
    res, saved = _child.run(ctx, code, f"ln-{build}")
    line = _venv.tool_message(res.output, ctx.record["template"])
    ctx.note(f"{build}: exit {res.returncode}, " + (f"printed {line!r}" if line else
                                                  "ran" if saved else _venv.last_exception(res.output, 300)))
    if not line and not saved:
        ctx.note(f"{build}: last output {res.tail(300)!r}")
    return res, saved, line


def reproduce(ctx):
    res, _, line = _run(ctx, "ln-old-toolkit")
    ctx.expect_error(_venv.raise_tool_message, "CUDA", res.output, ctx.record["template"])
    if not line.endswith("ln_fwd_kernels.cuh 236"):
        raise Refuted(f"printed at another place than ln_fwd_kernels.cuh 236: {line}")


def fix_1(ctx):
    _qwen.runs_without_flash_attn(ctx)


def fix_2(ctx):
    res, saved, _ = _run(ctx, "ln-setup-sm90")
    if saved is None:
        ctx.call(_venv.reraise, res.output)
        raise RuntimeError(f"the child neither ran nor printed an exception: {res.tail(600)}")
    F = ctx.torch.nn.functional
    ref = F.layer_norm(saved["x"].float(), (256,), saved["w"].float(), saved["b"].float(), 1e-5)
    ctx.close(saved["out"], ref, atol=2e-2, rtol=2e-2)
