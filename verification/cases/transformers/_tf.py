"""Helpers for the transformers cases: a tiny Llama-shaped model made in code (no download), and
the entry point users load models through, `from_pretrained(folder, attn_implementation=...)`.

`saved_model()` writes a randomly initialised two-layer model (config.json + safetensors, ~0.3 MB)
to a temporary folder once per process, so `from_pretrained` reads a real checkpoint folder as it
does for a downloaded model; `HF_HUB_OFFLINE=1` keeps it from asking the hub anything.
"""

from __future__ import annotations

import os
import tempfile

LOGGERS = ("transformers",)
_saved: list[str] = []


def tiny_config():
    from transformers import LlamaConfig

    return LlamaConfig(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                       num_hidden_layers=2, vocab_size=128, max_position_embeddings=256)


def saved_model() -> str:
    if not _saved:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from transformers import AutoModelForCausalLM

        path = os.path.join(tempfile.mkdtemp(prefix="errkb-tf-"), "tiny-llama")
        AutoModelForCausalLM.from_config(tiny_config(), attn_implementation="eager").save_pretrained(path)
        _saved.append(path)
    return _saved[0]


def from_config(**kwargs):
    """A call of AutoModelForCausalLM.from_config(tiny config, **kwargs)."""
    def run():
        from transformers import AutoModelForCausalLM

        return AutoModelForCausalLM.from_config(tiny_config(), **kwargs)
    return run


def from_pretrained(**kwargs):
    """A call of AutoModelForCausalLM.from_pretrained(<saved tiny model>, **kwargs): the user's entry point."""
    def run():
        from transformers import AutoModelForCausalLM

        return AutoModelForCausalLM.from_pretrained(saved_model(), **kwargs)
    return run


def entry(ctx, **kwargs):
    ctx.note(f"AutoModelForCausalLM.from_pretrained(<tiny Llama folder>, {', '.join(f'{k}={v!r}' for k, v in kwargs.items())})")
    return ctx.expect_first(from_pretrained(**kwargs), loggers=LOGGERS)


def flash_attn_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("flash_attn") is not None


# ---------------------------------------------------------------- release checks and log capture
def version() -> tuple[int, ...]:
    import re

    import transformers

    return tuple(int(x) for x in re.findall(r"\d+", transformers.__version__)[:3])


def needs(ctx, low: str | None = None, below: str | None = None, why: str = "") -> None:
    """Skip the step unless low <= transformers < below: the record's claim is about those releases."""
    import transformers

    have = version()
    lo = tuple(int(x) for x in low.split(".")) if low else None
    hi = tuple(int(x) for x in below.split(".")) if below else None
    if (lo and have < lo) or (hi and have >= hi):
        span = " and ".join(filter(None, [f">={low}" if low else "", f"<{below}" if below else ""]))
        ctx.skip(f"needs transformers {span}{': ' + why if why else ''} (this is {transformers.__version__})")


def fresh_once() -> None:
    """transformers' logger.warning_once remembers every message it printed in this process (an
    lru_cache); steps share a worker, so forget them before a step looks for (or for the absence of) one."""
    import logging

    import transformers.utils.logging  # noqa: F401 - installs Logger.warning_once

    cached = getattr(logging.Logger, "warning_once", None)
    if cached is not None and hasattr(cached, "cache_clear"):
        cached.cache_clear()


def refute(ctx, message: str, **observed):
    from errkb.verify.case import Refuted

    ctx.observed = observed or ctx.observed
    raise Refuted(message)
