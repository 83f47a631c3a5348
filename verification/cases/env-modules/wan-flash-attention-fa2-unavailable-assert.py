"""Wan 2.1's model code calls wan/modules/attention.py's flash_attention() directly; without an
importable flash_attn (and no FlashAttention-3) that function stops on `assert FLASH_ATTN_2_AVAILABLE`.

Environment: with_cpu_torch() (torch 2.13.0+cpu) and diffusers 0.32.2 (pip --target; WanModel is a
diffusers ModelMixin), Wan2.1's wan/modules/attention.py and model.py at commit 9737cba
(Wan-Video/Wan2.1; unchanged in the lines that matter since the first upload 65386b2), exported from a
local clone by verification/cases/_downstream.py. The package's two __init__.py files, which import the
whole pipeline (T5, VAE, CLIP, the generation classes and their dependencies), are replaced by empty
ones in the exported tree; the two module files are the commit's own. A child builds a one-block
text-to-video WanModel (dim 64, 2 heads, text_len 8) on the CPU and runs one forward pass on a 1x4x4
latent under bf16 autocast (Wan's generate() runs the model under amp.autocast(dtype=bfloat16)). A bare assert has an empty message: the child prints the statement of the traceback's last
frame, which is what Python shows and users paste, and the step raises that.

Reproduce: flash-attn absent, and again with flash-attn 2.8.3 installed without its compiled module (its
sdist built with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE, so `import flash_attn` raises ModuleNotFoundError
for flash_attn_2_cuda, as the record's conditions say): both leave FLASH_ATTN_2_AVAILABLE and
FLASH_ATTN_3_AVAILABLE False. The forward then reaches flash_attention(), whose first statement asserts
that q is a CUDA tensor; on the CPU it stops there, one statement before the record's, so the step is
skipped there and would confirm the record's statement on a GPU. Fix 1 (a working
flash-attn) needs a GPU: skipped. Fix 2: with the model's flash_attention name pointed at attention()
(the fix's switch), the forward runs through SDPA in bf16, warns that the padding mask is disabled
(the fix's caveat), and matches the same model with an fp32 softmax attention in place of
flash_attention() (max absolute difference of the outputs, under the same autocast; the output layer, which Wan's
init_weights() zeroes, is given random weights first). Wan's own fp32
regions (torch.cuda.amp.autocast(dtype=float32) inside the model) are mapped to CPU autocast in the child,
so the model keeps the dtypes it has under CUDA autocast (it asserts fp32 time embeddings)."""

import os

from verification.cases import _builds as b
from verification.cases import _downstream, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
REPO = "Wan-Video/Wan2.1"
COMMIT = "9737cba9c1c3c4d04b33fcad41c111989865d315"
DIFFUSERS = "diffusers==0.32.2"
DEVICE_ASSERT = "assert q.device.type == 'cuda'"  # flash_attention()'s first statement

CHILD = r'''
import sys, traceback, types, warnings
import torch
import wan.modules.attention as wa
import wan.modules.model as wm
print("flags FA2", wa.FLASH_ATTN_2_AVAILABLE, "FA3", wa.FLASH_ATTN_3_AVAILABLE, flush=True)
mode = sys.argv[1]
# Wan runs the model under CUDA autocast (bf16) with fp32 regions of its own (torch.cuda.amp.autocast);
# on the CPU the same regions go through CPU autocast (an fp32 request there turns autocast off inside)
wm.amp = types.SimpleNamespace(autocast=lambda dtype=None, **kw: torch.autocast("cpu", dtype=dtype))

def fp32_attention(q, k, v, q_lens=None, k_lens=None, **kw):
    qt, kt, vt = (t.float().transpose(1, 2) for t in (q, k, v))
    p = torch.softmax(qt @ kt.transpose(-1, -2) / qt.shape[-1] ** 0.5, -1)
    return (p @ vt).transpose(1, 2).to(q.dtype)

torch.manual_seed(0)
model = wm.WanModel(model_type="t2v", text_len=8, in_dim=4, dim=64, ffn_dim=128, freq_dim=32, text_dim=16,
                    out_dim=4, num_heads=2, num_layers=1).eval()
torch.nn.init.normal_(model.head.head.weight, std=0.5)  # init_weights() zeroes the output layer
x = [torch.randn(4, 1, 4, 4)]
t = torch.tensor([500])
context = [torch.randn(8, 16)]

def forward():
    with torch.autocast("cpu", dtype=torch.bfloat16), torch.no_grad():  # Wan's generate(): amp.autocast(bf16)
        return model(x, t, context, seq_len=4)[0].float()

if mode == "sdpa":
    wm.flash_attention = wa.attention   # the fix: the wrapper with the SDPA fallback
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        out = forward()
    except AssertionError as exc:
        traceback.print_exc()
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        print("ERRKB-ASSERT", frame.name, "|", (frame.line or "").strip(), flush=True)
        sys.exit(1)
for w in caught:
    print("ERRKB-WARN", w.category.__name__, "|", str(w.message), flush=True)
wm.flash_attention = fp32_attention
ref = forward()
print("ERRKB-RAN", tuple(out.shape), "maxerr", (out - ref).abs().max().item(), flush=True)
'''


def _tree(ctx):
    root = _downstream.tree(ctx, REPO, COMMIT, ("wan/modules/attention.py", "wan/modules/model.py"))
    for init in (root / "wan" / "__init__.py", root / "wan" / "modules" / "__init__.py"):
        init.write_text("")
    return root


def _fa_skip_cuda(ctx, env) -> str:
    folder = _venv._tmp_root() / "target-flash-attn-2.8.3-no-cuda"
    if not (folder / ".errkb-done").exists():
        wheel = b.flash_attn_python_wheel(ctx, "2.8.3", env=env)
        res = env.pip("install", "--no-deps", "--target", folder, wheel, timeout=300)
        if res.returncode != 0:
            ctx.skip(f"could not install {wheel}: {res.tail(300)}")
        (folder / ".errkb-done").write_text("ok")
    return str(folder)


def _forward(ctx, mode: str, *, with_fa: bool = False):
    env = b.with_cpu_torch(ctx)
    path = [str(_tree(ctx)), b.target_dir(ctx, DIFFUSERS, env=env)]
    if with_fa:
        path.insert(0, _fa_skip_cuda(ctx, env))
    script = _venv._tmp_root() / "wan_child.py"
    script.write_text(CHILD)
    res = _venv.run([env.python, script, mode], timeout=600,
                    env=_venv.tool_env(VIRTUAL_ENV=str(env.path), PYTHONPATH=os.pathsep.join(path)))
    flags = next((line for line in res.output.splitlines() if line.startswith("flags ")), "no flags printed")
    ctx.note(f"forward ({mode}{', flash-attn 2.8.3 without flash_attn_2_cuda on the path' if with_fa else ''}): {flags}; "
             + _venv.last_exception(res.output, 200))
    return res


def _statement(res):
    """Raise the bare assert the child reported, with the statement as its message."""
    line = next((line for line in res.output.splitlines() if line.startswith("ERRKB-ASSERT ")), None)
    if line is not None:
        raise AssertionError(line.split("|", 1)[1].strip())
    _venv.reraise(res.output)


def reproduce(ctx):
    runs = {"flash-attn absent": _forward(ctx, "as-is"),
            "flash-attn 2.8.3 without flash_attn_2_cuda": _forward(ctx, "as-is", with_fa=True)}
    asserted = {}
    for what, res in runs.items():
        line = next((line for line in res.output.splitlines() if line.startswith("ERRKB-ASSERT ")), "")
        asserted[what] = line.split("|", 1)[1].strip() if line else _venv.last_exception(res.output, 200)
        if "flags FA2 False FA3 False" not in res.output:
            raise RuntimeError(f"{what}: Wan's flags are not both False: {res.tail(300)}")
    if all(DEVICE_ASSERT in got for got in asserted.values()):
        ctx.skip("flash_attention() asserts that q is a CUDA tensor before its FA2 check "
                 f"(`{DEVICE_ASSERT} ...`), so on the CPU the forward stops there; with FLASH_ATTN_2_AVAILABLE "
                 "and FLASH_ATTN_3_AVAILABLE both False in both environments (noted) the record's statement "
                 "comes next, which needs a GPU to show")
    for what, got in asserted.items():
        ctx.note(f"{what}: AssertionError: {got}")
    ctx.expect_error(_statement, runs["flash-attn absent"])


def fix_1(ctx):
    ctx.skip("a flash-attn build that imports needs a CUDA compile (or a release wheel from GitHub, not reachable "
             "here) and an Ampere or newer GPU to run its kernels")


def fix_2(ctx):
    res = _forward(ctx, "sdpa")

    def ran():
        _statement(res)
        line = _venv.printed(res, "ERRKB-RAN")
        warned = [line for line in res.output.splitlines() if line.startswith("ERRKB-WARN") and "Padding mask" in line]
        ctx.note("attention() warned: " + (warned[0].split("|", 1)[1].strip() if warned else "nothing about padding"))
        return float(line.split("maxerr")[1])

    err = ctx.call(ran)
    ctx.close([err], [0.0], atol=3e-2, what="Wan block through SDPA (bf16 autocast) against the same with fp32 attention")
