"""vLLM 0.12 and older have no --attention-backend option: `vllm serve MODEL --attention-backend
NAME` stops in argument parsing with argparse's "unrecognized arguments"; 0.13.0 added the flag.

The steps build `vllm serve`'s own parser as vLLM's CLI does (a FlexibleArgumentParser named
"vllm" with the serve subcommand's `subparser_init`, i.e. make_arg_parser with every engine
argument) from the vLLM release installed where they run (the Python files of the 0.12.0 and
0.13.0 wheels on the CPU, each in an environment of its own; no compiled module is called), and
parse the documented command line; argparse's refusal (SystemExit 2) is read from what it printed.
Building the parser instantiates vLLM's config dataclasses, whose DeviceConfig asks the current
platform for its device type: where vLLM has not resolved a platform yet, the steps pin vLLM's own
CpuPlatform (what a CPU build of vLLM resolves; it only sets --device's default) and say so.
The reproduce step and fix 1 need vLLM < 0.13, fix 2 vLLM >= 0.13 (skipped otherwise)."""

import os
from contextlib import contextmanager

from errkb.verify.case import Refuted, argparse_call, attempt

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm"]}
TIMEOUT = 300
MODEL = "Qwen/Qwen2.5-7B-Instruct"  # a model id: nothing is fetched, the parser only reads it


def _release():
    from importlib.metadata import version

    text = version("vllm")
    return text, tuple(int(x) for x in text.split("+")[0].split(".")[:2])


def _needs(ctx, older: bool):
    text, rel = _release()
    if older and rel >= (0, 13):
        ctx.skip(f"needs vLLM < 0.13 (this is {text}): the flag exists there")
    if not older and rel < (0, 13):
        ctx.skip(f"needs vLLM >= 0.13 (this is {text}): the flag is missing there")
    ctx.note(f"vLLM {text}")


def _serve_parser(ctx):
    import vllm.platforms as platforms

    if platforms._current_platform is None:
        from vllm.platforms.cpu import CpuPlatform

        platforms._current_platform = CpuPlatform()
        ctx.note("vLLM's platform pinned to its CpuPlatform (only --device's default depends on it)")
    else:
        ctx.note(f"vLLM's platform: {type(platforms._current_platform).__name__}")
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = FlexibleArgumentParser(prog="vllm")
    ServeSubcommand().subparser_init(parser.add_subparsers(required=False, dest="subparser"))
    return parser


@contextmanager
def _env(**values):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def reproduce(ctx):
    _needs(ctx, older=True)
    parser = _serve_parser(ctx)
    exc = ctx.expect_error(argparse_call, parser.parse_args, ["serve", MODEL, "--attention-backend", "FLASHINFER"])
    if exc.code != 2:
        raise Refuted(f"argparse exited with status {exc.code}, not 2")
    ctx.note(f"exit status {exc.code}; printed as '{exc.prog}: error: ...'")
    _, other = attempt(argparse_call, parser.parse_args, ["serve", MODEL, "--attention-backend=TRITON_ATTN"])
    ctx.note(f"--attention-backend=TRITON_ATTN: {other}")


def fix_1(ctx):
    """The same launch with VLLM_ATTENTION_BACKEND=FLASHINFER and no flag: it parses, and vLLM's
    selector reads the backend from the variable."""
    _needs(ctx, older=True)
    parser = _serve_parser(ctx)
    with _env(VLLM_ATTENTION_BACKEND="FLASHINFER"):
        args = ctx.call(argparse_call, parser.parse_args, ["serve", MODEL])
        import vllm.envs as envs
        from vllm.attention.selector import get_env_variable_attn_backend

        from_env = ctx.call(lambda: envs.VLLM_ATTENTION_BACKEND)
        chosen = ctx.call(get_env_variable_attn_backend)
    if getattr(args, "model_tag", None) != MODEL:
        raise Refuted(f"the launch parsed to model_tag={getattr(args, 'model_tag', None)!r}")
    if from_env != "FLASHINFER" or getattr(chosen, "name", None) != "FLASHINFER":
        raise Refuted(f"vLLM read the variable as {from_env!r}, selector override {chosen!r}")
    ctx.note(f"envs.VLLM_ATTENTION_BACKEND={from_env!r}; selector override: {chosen!r}")


def fix_2(ctx):
    """vLLM 0.13+: the same command line parses, with the backend name kept; a name vLLM does
    not know is not refused by argparse either (noted)."""
    _needs(ctx, older=False)
    parser = _serve_parser(ctx)
    args = ctx.call(argparse_call, parser.parse_args, ["serve", MODEL, "--attention-backend", "FLASHINFER"])
    got = getattr(args, "attention_backend", None)
    if str(getattr(got, "name", got)) != "FLASHINFER":
        raise Refuted(f"--attention-backend FLASHINFER parsed to {got!r}")
    bogus, exc = attempt(argparse_call, parser.parse_args, ["serve", MODEL, "--attention-backend", "NOT_A_BACKEND"])
    ctx.note("--attention-backend NOT_A_BACKEND at parse time: "
             + (f"kept as {getattr(bogus, 'attention_backend', None)!r}" if exc is None else f"{type(exc).__name__}: {exc}"))
