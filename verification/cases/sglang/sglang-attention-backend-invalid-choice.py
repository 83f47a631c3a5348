"""SGLang's LLM server declares --attention-backend (and its prefill/decode variants) with a fixed
list of names: argparse refuses any other before a model is looked at.

The steps call SGLang's own `prepare_server_args(argv)`, the function `python -m
sglang.launch_server` and `sglang serve` hand the command line to (argparse, then the ServerArgs
built from it), in the release installed where they run (SGLang 0.5.23 on the CPU; nothing in it
needs a GPU or SGLang's compiled kernels). argparse's refusal (SystemExit 2) is read from what it
printed. Fix 2 is the part of `sglang serve` that decides which server parses the flags:
`get_is_diffusion_model` on a diffusers-format folder and on a single .safetensors file (the
diffusion server's own parser is not built here: it imports compiled kernels' packages)."""

import json
import os
import tempfile

from errkb.verify.case import Refuted, argparse_call, attempt, match_message

BACKEND = "sglang-server"
REQUIRES = {"packages": ["sglang.srt.server_args"]}
STEP_REQUIRES = {"fix_2": {"packages": ["sglang.cli.utils"]}}
TIMEOUT = 300
MODEL = ["--model-path", "dummy"]  # argparse only: no model is looked at before the choices check


def _parse(argv):
    """prepare_server_args(argv); an argparse exit comes back as errkb's UsageExit."""
    from sglang.srt.server_args import prepare_server_args

    return argparse_call(prepare_server_args, argv)


def reproduce(ctx):
    """A diffusion/SDPA name ('torch_sdpa') for --attention-backend; the prefill/decode variants,
    vLLM's and Transformers' names and cutlass_mla (listed up to 0.5.16) are noted."""
    exc = ctx.expect_error(_parse, [*MODEL, "--attention-backend", "torch_sdpa"])
    if exc.code != 2:
        raise Refuted(f"argparse exited with status {exc.code}, not 2")
    ctx.note(f"exit status {exc.code}; printed as '{exc.prog}: error: ...'")
    for flag, name in (("--prefill-attention-backend", "sdpa"), ("--decode-attention-backend", "FLASH_ATTN"),
                       ("--attention-backend", "flash_attention_2"), ("--attention-backend", "cutlass_mla")):
        _, other = attempt(_parse, [*MODEL, flag, name])
        how = match_message(ctx.record["template"], str(other)) if other is not None else None
        ctx.note(f"{flag} {name}: " + ("accepted" if other is None else f"template match {how}: {str(other)[:120]}"))


def fix_1(ctx):
    """torch_native, from the printed list, is taken."""
    args = ctx.call(_parse, [*MODEL, "--attention-backend", "torch_native"])
    if getattr(args, "attention_backend", None) != "torch_native":
        raise Refuted(f"parsed attention_backend is {getattr(args, 'attention_backend', None)!r}")


def fix_2(ctx):
    """sglang serve's detection: a folder whose model_index.json has _diffusers_version is a
    diffusion model (its flags go to the diffusion server); a single .safetensors file is not."""
    from sglang.cli.utils import get_is_diffusion_model

    root = tempfile.mkdtemp(prefix="errkb-sglang-diffusion-")
    folder = os.path.join(root, "FLUX.1-dev")
    os.makedirs(folder)
    with open(os.path.join(folder, "model_index.json"), "w") as f:
        json.dump({"_class_name": "FluxPipeline", "_diffusers_version": "0.30.0"}, f)
    single = os.path.join(root, "flux1-dev.safetensors")
    open(single, "wb").close()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local path: nothing is fetched either way
    if not ctx.call(get_is_diffusion_model, folder):
        raise Refuted("a diffusers folder was not recognised as a diffusion model")
    if ctx.call(get_is_diffusion_model, single):
        raise Refuted("a single .safetensors file was taken for a diffusers model")
    ctx.note("diffusers folder: diffusion server; single .safetensors file: falls through to the LLM server")


def fix_3(ctx):
    """--help prints the installed release's choices for --attention-backend."""
    text = ctx.call(_parse, ["--help"])
    start = text.find("--attention-backend {")
    if start < 0 or "torch_native" not in text[start:start + 600]:
        raise Refuted("the help text does not list the --attention-backend choices")
    ctx.note(text[start:text.find("}", start) + 1])
