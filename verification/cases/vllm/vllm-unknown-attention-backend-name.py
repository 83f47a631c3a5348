"""--attention-backend with a name that is not an AttentionBackendEnum member is refused with the list of valid names."""

from errkb.verify.case import Refuted
from verification.cases.vllm._vllm import pin_platform
from verification.cases.vllm._engine import first

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq"]}


def _attention_config(backend):
    # --attention-backend NAME becomes AttentionConfig(backend=NAME); its validator looks the
    # name up in AttentionBackendEnum.
    pin_platform()
    from vllm.config.attention import AttentionConfig

    return AttentionConfig(backend=backend)


def reproduce(ctx):
    exc = ctx.expect_error(_attention_config, "XFORMERS")
    if "TRITON_ATTN" not in str(exc):
        raise Refuted("the message does not list the valid names")


def fix_1(ctx):
    config = ctx.call(_attention_config, "TRITON_ATTN")
    if config.backend is None or config.backend.name != "TRITON_ATTN":
        raise Refuted(f"backend parsed as {config.backend!r}")


def control(ctx):
    # 'auto' (and a lower-case member name) are accepted as well.
    if ctx.call(_attention_config, "auto").backend is not None:
        raise Refuted("'auto' did not select automatic backend choice")
    if ctx.call(_attention_config, "flash_attn").backend.name != "FLASH_ATTN":
        raise Refuted("lower-case member name not accepted")


def entry_vllm_engine(ctx):
    # vllm serve <Llama-shaped> --attention-backend XFORMERS (a name earlier releases had).
    first(ctx, ["--attention-backend", "XFORMERS"])
