"""SGLang's vision attention refuses the 'fa3' backend on a Blackwell GPU."""

from errkb.verify.case import Refuted
from verification.cases.sglang._server import published

BACKEND = "sglang-server"
# The check asks the platform whether this is a Blackwell GPU (SM10x/11x/12x with CUDA 12.8+).
REQUIRES = {"cuda": True, "arch": "sm100+", "packages": ["sglang.srt.layers.attention.vision", "sglang.srt.server_args"]}
STEP_REQUIRES = {"control": {"cuda": True, "arch": "sm90"}}


def _vision_backend(passed_backend=None):
    """VisionAttention's choice of kernel; the method reads the published --mm-attention-backend and
    the platform, nothing of the layer itself (building a real layer needs its weights' shapes)."""
    from sglang.srt.layers.attention.vision import VisionAttention

    layer = VisionAttention.__new__(VisionAttention)
    return layer._determine_attention_backend(passed_backend)


def reproduce(ctx):
    with published(mm_attention_backend="fa3"):
        ctx.expect_error(_vision_backend)


def fix_1(ctx):
    # --mm-attention-backend triton_attn wins over what the model code asks for ('fa3' here).
    with published(mm_attention_backend="triton_attn"):
        got = ctx.call(_vision_backend, "fa3")
    if got != "triton_attn":
        raise Refuted(f"the vision backend resolved to {got!r}")


def control(ctx):
    # On Hopper the same flag is accepted.
    with published(mm_attention_backend="fa3"):
        got = ctx.call(_vision_backend)
    if got != "fa3":
        raise Refuted(f"the vision backend resolved to {got!r}")
