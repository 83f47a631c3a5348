"""A diffusers-style DreamBooth trainer with its xFormers option on, where xformers is not installed:
"xformers is not available. Make sure it is installed correctly".

AutoTrain's own code, as its trainer calls it: autotrain-advanced 0.6.40 (PyPI wheel, `--no-deps`: its
pins are for a whole training stack) with diffusers 0.21.4 (its pin), transformers 4.35.2, accelerate
0.24.1, pydantic 1.10.11 (its pin), loguru 0.7.0 and PyPI's torch 2.5.1 with torchvision 0.20.1
(autotrain's dreambooth/datasets.py imports torchvision), in an environment made by uv 0.9.0; xformers is
not installed. The child builds a small UNet2DConditionModel from a config (no download) and the trainer's
own DreamBoothTrainingParams, then calls autotrain.trainers.dreambooth.utils.enable_xformers(unet, config),
the call its __main__ makes before training.

Reproduce: xformers=True raises the record's ValueError. Fix 1: xformers=False returns and leaves diffusers'
default processors (AttnProcessor2_0, PyTorch's SDPA, on torch 2.5.1); a forward pass of the UNet runs.
Fix 2: xformers 0.0.28.post3 (the release built for torch 2.5.1) installed into the same environment:
its import works there, diffusers' check answers True and enable_xformers no longer raises the record's
error; what stops it next on this machine is diffusers' own CUDA check (noted: the processors themselves
need a GPU)."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIREMENTS = ("torch==2.5.1", "torchvision==0.20.1", "diffusers==0.21.4", "transformers==4.35.2",
                "huggingface-hub==0.17.3", "accelerate==0.24.1", "pydantic==1.10.11", "loguru==0.7.0", "packaging")
AUTOTRAIN = "autotrain-advanced==0.6.40"
XFORMERS = "xformers==0.0.28.post3"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
CHILD = '''
import sys, torch, diffusers
from diffusers import UNet2DConditionModel
from diffusers.utils.import_utils import is_xformers_available
from autotrain.trainers.dreambooth.params import DreamBoothTrainingParams
from autotrain.trainers.dreambooth.utils import enable_xformers
print("versions", torch.__version__, diffusers.__version__, "is_xformers_available", is_xformers_available())
torch.manual_seed(0)
unet = UNet2DConditionModel(sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
    down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
    cross_attention_dim=32, attention_head_dim=8, norm_num_groups=32)
config = DreamBoothTrainingParams(model="tiny-unet", image_path="images", prompt="a photo of sks dog", xformers=XF)
enable_xformers(unet, config)
print("processors", sorted({type(p).__name__ for p in unet.attn_processors.values()}))
out = unet(torch.randn(1, 4, 8, 8), 10, encoder_hidden_states=torch.randn(1, 3, 32)).sample
print("forward", tuple(out.shape), bool(torch.isfinite(out).all()))
'''


def _env(ctx, key: str = "autotrain-0.6.40", *extra: str):
    tool, env = b.uv_env(ctx, key, *REQUIREMENTS, *extra)
    stamp = env.path / ".errkb-autotrain"
    if not stamp.exists():
        res = b.uv_pip(tool, env, "install", "--no-deps", AUTOTRAIN)
        if res.returncode != 0:
            ctx.skip(f"could not install {AUTOTRAIN}: {res.tail(400)}")
        stamp.write_text(AUTOTRAIN)
    ctx.note(f"then `uv pip install --no-deps {AUTOTRAIN}`; installed: "
             + ", ".join(f"{d} {env.version(d)}" for d in ("autotrain-advanced", "diffusers", "torch", "xformers")))
    return env


def _run(ctx, env, xformers: bool):
    res = env.python_run(CHILD.replace("xformers=XF", f"xformers={xformers}"), timeout=600)
    ctx.note(f"enable_xformers with xformers={xformers}: "
             + " | ".join(l for l in res.output.splitlines() if l.startswith(("versions", "processors", "forward")))
             + f" | {_venv.last_exception(res.output, 300)}")
    return res


def reproduce(ctx):
    res = _run(ctx, _env(ctx), True)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    res = _run(ctx, _env(ctx), False)

    def trains_without_xformers():
        _venv.reraise(res.output)
        if "processors ['AttnProcessor2_0']" not in res.output or "forward (1, 4, 8, 8) True" not in res.output:
            raise AssertionError(f"the UNet did not keep SDPA processors and run: {res.tail(500)}")

    ctx.call(trains_without_xformers)


def fix_2(ctx):
    env = _env(ctx, "autotrain-0.6.40-xformers", XFORMERS)
    check = env.python_run("import torch, xformers, xformers.ops; print('xformers', xformers.__version__, 'torch', torch.__version__)")
    ctx.note("the fix's import check: " + (next((l for l in check.output.splitlines() if l.startswith("xformers ")), "")
                                          or _venv.last_exception(check.output, 300)))
    res = _run(ctx, env, True)

    def passes_the_check():
        _venv.reraise(check.output)
        if "is_xformers_available True" not in res.output:
            raise AssertionError(f"diffusers still does not see xformers: {res.tail(400)}")
        _venv.reraise(res.output, ctx.record["template"])

    ctx.call(passes_the_check)
