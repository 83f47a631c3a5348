"""YOLOv12's fork of ultralytics logs 'FlashAttention is not available on this device. Using
scaled_dot_product_attention instead.' when ultralytics/nn/modules/block.py is imported on a machine
where torch sees no CUDA GPU of compute capability 8.0 or newer (or flash_attn does not import).

Environment: a new virtual environment with torch 2.13.0+cpu (local wheel), torchvision 0.28.0 (its
PyPI wheel, the release for torch 2.13.0), numpy 1.26.4, opencv-python-headless 4.9.0.80 and huggingface-hub
0.23.2 (the pins of the repository's requirements.txt), safetensors, and the other dependencies its pyproject.toml lists, as pip resolves
them; flash-attn not installed. sunsmarterjie/yolov12 at commit d3cbe103 (exported from a local clone by
verification/cases/_downstream.py, put on PYTHONPATH; nothing of it is committed here). YOLO_OFFLINE=True
(ultralytics probes public DNS servers at import otherwise) and a temporary YOLO_CONFIG_DIR. A child taps
the logger `ultralytics.nn.modules.block` before the import and prints what it logs.

Reproduce: `from ultralytics import YOLO` on this GPU-less machine logs the record's warning at WARNING
(the else branch: torch.cuda.is_available() is False). Fix 1: the fix's one-line check prints torch's
version, `None False` for its CUDA build and availability, and then get_device_capability() raises, which
the fix's caveat names as the answer. Fix 2: the fallback runs: a YOLOv12-n model built from
yolov12n.yaml runs a forward pass on the CPU, and one AAttn block (dim 64, 2 heads, 4 areas) gives the
attention that torch's scaled_dot_product_attention computes from the block's own q, k and v (fp32).
At d3cbe103 that fallback is an explicit matmul-softmax in AAttn.forward, not a call of SDPA (imported
under the name `sdpa` and not used); the record says so since this run. Fix 3 (a flash-attn wheel for
an Ampere GPU) needs a GPU: skipped."""

import logging
import os

from verification.cases import _builds as b
from verification.cases import _downstream, _venv
from verification.cases import _tiny_llama as llama

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
REPO = "sunsmarterjie/yolov12"
COMMIT = "d3cbe103b992ff6dd20c722e84e1b6f18f4c5efc"
LOGGER = "ultralytics.nn.modules.block"
DEPS = ("torchvision==0.28.0", "numpy==1.26.4", "opencv-python-headless==4.9.0.80", "matplotlib", "pillow",
        "pyyaml", "requests", "scipy", "tqdm", "psutil", "py-cpuinfo", "pandas", "seaborn", "ultralytics-thop",
        "huggingface-hub==0.23.2", "safetensors")
FIX_1 = ("import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available()); "
         "print(torch.cuda.get_device_capability()); from flash_attn.flash_attn_interface import flash_attn_func")

TAP = r'''
import logging
class _ErrkbTap(logging.Handler):
    def emit(self, record):
        print("ERRKB-LOG", record.levelname, record.name, repr(record.getMessage()), flush=True)
logging.getLogger("ultralytics.nn.modules.block").addHandler(_ErrkbTap())
'''

IMPORT = TAP + r'''
from ultralytics import YOLO
print("ERRKB-IMPORTED", flush=True)
'''

FALLBACK = TAP + r'''
import torch
import torch.nn.functional as F
from ultralytics import YOLO
from ultralytics.nn.modules import block
torch.manual_seed(0)
model = YOLO("yolov12n.yaml").model.eval()
with torch.no_grad():
    preds = model(torch.rand(1, 3, 64, 64))
print("ERRKB-MODEL", type(preds).__name__, flush=True)

m = block.AAttn(dim=64, num_heads=2, area=4).eval()
x = torch.randn(2, 64, 8, 8)
with torch.no_grad():
    out = m(x)
    # the same block with torch's SDPA on its own q, k and v
    B, C, H, W = x.shape
    N = H * W
    qk = m.qk(x).flatten(2).transpose(1, 2)
    v = m.v(x)
    pp = m.pe(v)
    v = v.flatten(2).transpose(1, 2)
    qk = qk.reshape(B * m.area, N // m.area, C * 2)
    v = v.reshape(B * m.area, N // m.area, C)
    q, k = qk.split([C, C], dim=2)
    heads = lambda t: t.reshape(t.shape[0], t.shape[1], m.num_heads, m.head_dim).transpose(1, 2)
    ref = F.scaled_dot_product_attention(heads(q), heads(k), heads(v)).transpose(1, 2).reshape(B, N, C)
    ref = m.proj(ref.reshape(B, H, W, C).permute(0, 3, 1, 2) + pp)
print("ERRKB-AATTN maxerr", (out - ref).abs().max().item(), "USE_FLASH_ATTN", block.USE_FLASH_ATTN, flush=True)
'''


def _env(ctx):
    return _venv.venv(ctx, "yolov12-cpu-torch", pip=b.PIP, install=[*b.cpu_torch_requirement(), *DEPS])


def _run(ctx, code: str):
    env = _env(ctx)
    root = _downstream.tree(ctx, REPO, COMMIT, ("ultralytics",))
    config = _venv._tmp_root() / "yolo-config"
    config.mkdir(exist_ok=True)
    res = _venv.run([env.python, "-c", code], timeout=600, cwd=_venv._tmp_root(),
                    env=_venv.tool_env(VIRTUAL_ENV=str(env.path), PYTHONPATH=str(root), YOLO_OFFLINE="True",
                                       YOLO_CONFIG_DIR=str(config)))
    _venv.noted(ctx, env)
    ctx.note(f"child: {_venv.last_exception(res.output, 200)}")
    causes = _venv.exception_lines(res.output)
    if causes and causes[-1][0] == "ModuleNotFoundError":
        raise RuntimeError(f"a dependency of the repository is missing from the environment: {causes[-1][1]}")
    return res


def reproduce(ctx):
    res = _run(ctx, IMPORT)
    ctx.expect_logged(LOGGER, llama.relog, res.output)
    ctx.call(_venv.finished, res, "ERRKB-IMPORTED", "the import")


def fix_1(ctx):
    env = _env(ctx)
    res = env.python_run(FIX_1)
    ctx.note("`python -c <the fix's check>`: " + " | ".join(res.output.strip().splitlines()[:1] + [_venv.last_exception(res.output, 200)]))

    def answers():
        first = res.output.strip().splitlines()[0] if res.output.strip() else ""
        if not first.endswith("None False"):
            raise AssertionError(f"the check did not print a CPU-only torch without CUDA: {res.tail(300)}")
        if "get_device_capability" not in res.output and "CUDA" not in _venv.last_exception(res.output):
            raise AssertionError(f"get_device_capability() did not raise on the missing CUDA device: {res.tail(300)}")
    ctx.call(answers)


def fix_2(ctx):
    res = _run(ctx, FALLBACK)
    logged = [line for line in res.output.splitlines() if line.startswith("ERRKB-LOG ")]
    ctx.note(f"logged on import: {len(logged)} line(s) on {LOGGER}")

    def ran():
        _venv.finished(res, "ERRKB-MODEL", "the YOLOv12-n forward pass")
        line = _venv.printed(res, "ERRKB-AATTN")
        ctx.note(line.replace("ERRKB-AATTN ", "AAttn against SDPA: "))
        return float(line.split()[2])

    err = ctx.call(ran)
    ctx.close([err], [0.0], atol=1e-5, what="AAttn's CPU fallback against SDPA on the same q, k, v (fp32)")


def fix_3(ctx):
    ctx.skip("installs a flash-attn build for the installed torch and CUDA and uses it on an Ampere or newer GPU")
