"""diffusers up to 0.20.x hand cross_attention_kwargs={"scale": s} (the LoRA strength) to every
attention processor, and the stock processors have no scale parameter: "<Name>AttnProcessor.__call__()
got an unexpected keyword argument 'scale'" whenever no LoRA processor is in place.

A small UNet2DConditionModel made from a config in code (no Hub), on with_torch()'s torch 2.14.1 on
the CPU (verification/cases/_diffusers.py), with SlicedAttnProcessor installed: 0.20.0's default
AttnProcessor2_0 refuses scale the same way, but the record's template needs a prefix before
"AttnProcessor" and does not match that bare name (a known gap, see docs/verification.md).
Reproduce: 0.20.0 with cross_attention_kwargs={"scale": 0.5} raises the record's message. Fix 2:
0.27.0 runs the same call.
Fix 3: on 0.20.0, the call without scale runs, and gives the same output as 0.27.0 with scale (no
LoRA is loaded, so scale changes nothing)."""

from verification.cases import _diffusers, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500

FORWARD = r'''
import torch
from diffusers import UNet2DConditionModel
KWARGS, SLICED = CROSS_KWARGS, USE_SLICED
torch.manual_seed(0)
unet = UNet2DConditionModel(sample_size=8, in_channels=4, out_channels=4, layers_per_block=1,
                            block_out_channels=(32, 64), down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                            up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=32,
                            attention_head_dim=8, norm_num_groups=8).eval()
if SLICED:
    from diffusers.models.attention_processor import SlicedAttnProcessor
    unet.set_attn_processor(SlicedAttnProcessor(1))
print("processors", sorted({type(p).__name__ for p in unet.attn_processors.values()}), flush=True)
torch.manual_seed(1)
sample, text = torch.randn(1, 4, 8, 8), torch.randn(1, 7, 32)
with torch.no_grad():
    out = unet(sample, 10, encoder_hidden_states=text, cross_attention_kwargs=KWARGS).sample
print("UNET", out.flatten()[:64].tolist(), flush=True)
'''


def _forward(ctx, release: str, scale: bool, sliced: bool = False):
    code = (FORWARD.replace("CROSS_KWARGS", repr({"scale": 0.5} if scale else None))
            .replace("USE_SLICED", str(sliced)))
    what = ("SlicedAttnProcessor" if sliced else "default processors") + (", scale=0.5" if scale else ", no scale")
    return _diffusers.run(ctx, code, release, "UNet forward, " + what, "UNET")


def reproduce(ctx):
    res = _forward(ctx, "0.20.0", scale=True, sliced=True)
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_2(ctx):
    _diffusers.printed_values(ctx, _forward(ctx, "0.27.0", scale=True, sliced=True), "UNET")


def fix_3(ctx):
    ctx.close(_diffusers.printed_values(ctx, _forward(ctx, "0.20.0", scale=False), "UNET"),
              _diffusers.printed_values(ctx, _forward(ctx, "0.27.0", scale=True), "UNET"),
              atol=1e-4, what="0.20.0 without scale against 0.27.0 with it")
