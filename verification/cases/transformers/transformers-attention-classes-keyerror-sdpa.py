"""A model with its own attention table that lacks 'sdpa', loaded while transformers picks 'sdpa':
"KeyError: 'sdpa'" (surya-ocr 0.6.10's reading-order model under transformers 4.46).

Environment: PyPI's torch 2.5.1 and transformers 4.46.3 (uv, from its cache) with surya-ocr 0.6.10
(pip --target, --no-deps: its OCR dependencies such as opencv and pdftext are not needed by the
ordering model's modules) and the few packages those modules import (pydantic, pydantic-settings,
python-dotenv, pillow); transformers 4.45.2 (pip --target, --no-deps) put in front for fix 1. No Hub:
a tiny reading-order checkpoint is made in code from surya's own config classes (a one-layer
VariableDonutSwin encoder and MBartOrder decoder, built with attn_implementation='eager') and saved to
a folder, and surya's own `load_model(checkpoint=folder, device='cpu')` loads it as marker's
`load_all_models` does with the real checkpoint.

Reproduce: load_model with transformers 4.46.3 stops in surya/model/ordering/decoder.py on the
record's KeyError. Fix 1: transformers 4.45.2 loads it (the decoder's _attn_implementation is
'eager'). Fix 2: marker-pdf >= 0.3.10 / surya-ocr >= 0.6.11 bring other dependencies (not installed
here); not run. Fix 3: load_model's own steps with `attn_implementation='eager'` added to its
from_pretrained call, as the fix says, on the same folder with 4.46.3: the model is built and loaded (no forward pass is run)."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
SURYA = "surya-ocr==0.6.10"
MAKE = r'''
import os, sys, tempfile, torch
from transformers import VisionEncoderDecoderConfig
import transformers
from surya.model.ordering.config import MBartOrderConfig, VariableDonutSwinConfig
from surya.model.ordering.decoder import MBartOrder
from surya.model.ordering.encoder import VariableDonutSwinModel
from surya.model.ordering.encoderdecoder import OrderVisionEncoderDecoderModel
from surya.model.ordering.model import load_model
print("VERSIONS", transformers.__version__, flush=True)
enc = VariableDonutSwinConfig(image_size=[32, 32], patch_size=4, num_channels=3, embed_dim=8, depths=[1], num_heads=[1],
                              window_size=4, use_2d_embeddings=True)
dec = MBartOrderConfig(vocab_size=64, d_model=16, decoder_layers=1, decoder_attention_heads=2, decoder_ffn_dim=32,
                       max_position_embeddings=64, kv_heads=1, max_width=64, max_height=64, encoder_layers=0,
                       is_decoder=True, add_cross_attention=True, tie_word_embeddings=False)
config = VisionEncoderDecoderConfig.from_encoder_decoder_configs(enc, dec)
config.encoder, config.decoder = enc, dec
config.tie_word_embeddings = False
for c in (config, enc, dec):
    c._attn_implementation = "eager"
model = OrderVisionEncoderDecoderModel(config=config, encoder=VariableDonutSwinModel(enc), decoder=MBartOrder(dec))
folder = tempfile.mkdtemp(prefix="errkb-surya-order-")
model.save_pretrained(folder)
print("SAVED", flush=True)
'''
LOAD = MAKE + r'''
model = load_model(checkpoint=folder, device="cpu", dtype=torch.float32)
print("LOADED", model.decoder.config._attn_implementation, flush=True)
'''
EAGER = MAKE + r'''
from transformers import AutoModel, AutoModelForCausalLM
AutoModel.register(MBartOrderConfig, MBartOrder)
AutoModelForCausalLM.register(MBartOrderConfig, MBartOrder)
AutoModel.register(VariableDonutSwinConfig, VariableDonutSwinModel)
loaded = VisionEncoderDecoderConfig.from_pretrained(folder)  # load_model's own config steps, then the fix's argument
loaded.decoder = MBartOrderConfig(**vars(loaded.decoder))
loaded.encoder = VariableDonutSwinConfig(**vars(loaded.encoder))
model = OrderVisionEncoderDecoderModel.from_pretrained(folder, config=loaded, attn_implementation="eager",
                                                       torch_dtype=torch.float32).eval()
print("LOADED", model.decoder.config._attn_implementation, flush=True)
'''


def _env(ctx):
    _, env = b.uv_env(ctx, "surya-tf4.46.3", "torch==2.5.1", "transformers==4.46.3", f"pip=={b.PIP}", "pydantic",
                      "pydantic-settings", "python-dotenv", "pillow<11")
    return env


def _run(ctx, code: str, transformers: str | None = None) -> _venv.Run:
    env = _env(ctx)
    path = [b.target_dir(ctx, SURYA, no_deps=True, env=env)]
    if transformers:
        path.insert(0, b.target_dir(ctx, transformers, no_deps=True, env=env))
    res = b.run_with_torch(ctx, code, path=path, env=env)
    got = next((ln.split()[1] for ln in res.output.splitlines() if ln.startswith("VERSIONS ")), None)
    ctx.note(f"transformers {got}, {SURYA}: " + (_venv.last_exception(res.output, 240) if res.returncode
                                                 else next((ln for ln in res.output.splitlines() if ln.startswith("LOADED")), "ok")))
    if "SAVED" not in res.output:
        raise RuntimeError(f"the tiny checkpoint was not made: {res.tail(800)}")
    return res


def _printed_keyerror(output: str) -> None:
    """The traceback's last line, 'KeyError: 'sdpa'' (the record quotes it with its class, as Python prints it),
    raised again as a KeyError whose text is that line."""
    line = next((ln.strip() for ln in reversed(output.splitlines()) if ln.startswith("KeyError: ")), None)
    if line is not None:
        raise type("KeyError", (KeyError,), {"__str__": lambda self: self.args[0]})(line)


def reproduce(ctx):
    res = _run(ctx, LOAD)
    frame = [ln.strip() for ln in res.output.splitlines() if 'surya/model/ordering/decoder.py", line' in ln][-1:]
    ctx.note("last surya frame: " + (frame[0] if frame else "(none)"))
    ctx.expect_error(_printed_keyerror, res.output)


def fix_1(ctx):
    res = _run(ctx, LOAD, "transformers==4.45.2")
    ctx.call(_venv.finished, res, "LOADED eager", "load_model with eager attention")


def fix_2(ctx):
    ctx.skip("marker-pdf >= 0.3.10 with surya-ocr >= 0.6.13 is another dependency set (and API); not installed here")


def fix_3(ctx):
    res = _run(ctx, EAGER)
    ctx.call(_venv.finished, res, "LOADED eager", "from_pretrained(attn_implementation='eager')")
