"""diffusers asked to use xFormers attention where `import xformers` fails: ModuleNotFoundError
"Refer to https://github.com/facebookresearch/xformers for more information on how to install xformers".

CPU only, no download: a tiny UNet2DConditionModel built from a config in code (diffusers 0.35.2,
torch 2.13.0+cpu, xformers not installed), then model.enable_xformers_memory_efficient_attention(),
which is what pipelines call on each model. Fix 1 (install xformers) cannot pass here: with xformers
importable, diffusers 0.35.2 then refuses without a CUDA device and runs a test attention call on
one. Fix 2 (leave xformers off) runs the model with diffusers' default processor (PyTorch SDPA); its
output must match the same weights under diffusers' plain AttnProcessor."""

import importlib.util

BACKEND = "xformers"
REQUIRES = {"packages": ["torch", "diffusers"]}
TIMEOUT = 300


def tiny_unet():
    from diffusers import UNet2DConditionModel

    return UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32, attention_head_dim=8, norm_num_groups=8).eval()


def reproduce(ctx):
    if importlib.util.find_spec("xformers") is not None:
        ctx.skip("xformers is importable here")
    model = tiny_unet()
    ctx.expect_error(model.enable_xformers_memory_efficient_attention)


def fix_1(ctx):
    ctx.skip("with xformers installed, diffusers' xformers switch needs a CUDA device (and a wheel built for this torch)")


def fix_2(ctx):
    from diffusers.models.attention_processor import AttnProcessor

    t = ctx.torch
    ctx.seed(0)
    model = tiny_unet()
    sample, step, text = t.randn(1, 4, 8, 8), t.tensor([10]), t.randn(1, 3, 32)
    with t.no_grad():
        out = ctx.call(lambda: model(sample, step, encoder_hidden_states=text).sample)
        procs = {type(p).__name__ for p in model.attn_processors.values()}
        model.set_attn_processor(AttnProcessor())
        ref = model(sample, step, encoder_hidden_states=text).sample
    ctx.note(f"default processors: {sorted(procs)}")
    ctx.close(out, ref, atol=1e-4, rtol=1e-4, what="default (SDPA) processor vs plain AttnProcessor")
