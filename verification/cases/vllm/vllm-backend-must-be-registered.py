"""AttentionBackendEnum.TORCH_SDPA (and CUSTOM) has no class path: resolving it asks for register_backend()."""

from errkb.verify.case import Refuted
from verification.cases.vllm._vllm import pin_platform
from verification.cases.vllm._engine import first

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "vllm.v1.attention.backends.registry", "cbor2", "openai_harmony", "openai", "pydantic", "zmq"]}


def _backend_path(name):
    # --attention-backend NAME parses through AttentionConfig into an AttentionBackendEnum
    # member; the selector then resolves the member's class path (get_class -> get_path).
    pin_platform()
    from vllm.config.attention import AttentionConfig

    return AttentionConfig(backend=name).backend.get_path()


def reproduce(ctx):
    ctx.expect_error(_backend_path, "TORCH_SDPA")
    ctx.expect_error(_backend_path, "CUSTOM")


def fix_1(ctx):
    path = ctx.call(_backend_path, "TRITON_ATTN")
    if not path.endswith("TritonAttentionBackend"):
        raise Refuted(f"unexpected class path {path}")


def fix_2(ctx):
    # --mm-encoder-attn-backend TORCH_SDPA: the encoder flag accepts the member (vLLM's
    # MultiModalConfig validator); it is never resolved to a text backend class path.
    pin_platform()
    from vllm.config.multimodal import MultiModalConfig

    config = ctx.call(MultiModalConfig, mm_encoder_attn_backend="TORCH_SDPA")
    if getattr(config.mm_encoder_attn_backend, "name", None) != "TORCH_SDPA":
        raise Refuted(f"encoder backend parsed as {config.mm_encoder_attn_backend!r}")


def control(ctx):
    # A member registered through vLLM's own register_backend resolves to the registered path.
    pin_platform()
    from vllm.v1.attention.backends.registry import AttentionBackendEnum, register_backend

    register_backend(AttentionBackendEnum.CUSTOM, "my.module.MyBackend")
    try:
        path = ctx.call(AttentionBackendEnum.CUSTOM.get_path)
    finally:
        AttentionBackendEnum.CUSTOM.clear_override()
    if path != "my.module.MyBackend":
        raise Refuted(f"registered path resolved as {path}")


def entry_vllm_engine(ctx):
    # vllm serve <Llama-shaped> --attention-backend CUSTOM (an enum member with no class registered).
    first(ctx, ["--attention-backend", "CUSTOM"])
