"""diffusers' VAE middle block passes temb= to its attention processor from 0.17.0 on, and a
processor class without that parameter stops the call: "<Name>AttnProcessor.__call__() got an
unexpected keyword argument 'temb'". Checked with SlicedAttnProcessor, which diffusers 0.20.0 ships
without temb (the xFormers processors of the dev paste need xformers and a GPU; the check is the
same Python argument binding).

A small AutoencoderKL made from a config in code (no Hub), on with_torch()'s torch 2.14.1 on the
CPU; diffusers and its dependencies with pip --target (huggingface_hub below 0.26, which still has
what these releases import). Reproduce: 0.20.0 with SlicedAttnProcessor on the VAE raises the
record's message when decoding. Fix 1: 0.27.0 (which drops keywords a processor does not declare)
runs the same decode. Fix 4: on 0.20.0, the stock AttnProcessor2_0 on the VAE runs, and its output
matches the plain AttnProcessor's."""

from verification.cases import _diffusers, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500

DECODE = r'''
import torch
from diffusers import AutoencoderKL
from diffusers.models import attention_processor as ap
PROCESSOR = "NAME"
torch.manual_seed(0)
vae = AutoencoderKL(block_out_channels=(32, 32), down_block_types=("DownEncoderBlock2D",) * 2,
                    up_block_types=("UpDecoderBlock2D",) * 2, latent_channels=4, norm_num_groups=8).eval()
proc = ap.SlicedAttnProcessor(1) if PROCESSOR == "SlicedAttnProcessor" else getattr(ap, PROCESSOR)()
vae.set_attn_processor(proc)
with torch.no_grad():
    out = vae.decode(torch.randn(1, 4, 8, 8)).sample
print("DECODED", out.flatten()[:64].tolist(), flush=True)
'''


def _decode(ctx, release: str, processor: str):
    return _diffusers.run(ctx, DECODE.replace("NAME", processor), release, f"{processor} on the VAE", "DECODED")


def _values(ctx, res) -> list[float]:
    return _diffusers.printed_values(ctx, res, "DECODED")


def reproduce(ctx):
    res = _decode(ctx, "0.20.0", "SlicedAttnProcessor")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    _values(ctx, _decode(ctx, "0.27.0", "SlicedAttnProcessor"))


def fix_4(ctx):
    ctx.close(_values(ctx, _decode(ctx, "0.20.0", "AttnProcessor2_0")),
              _values(ctx, _decode(ctx, "0.20.0", "AttnProcessor")), atol=1e-4, what="AttnProcessor2_0 against AttnProcessor")
