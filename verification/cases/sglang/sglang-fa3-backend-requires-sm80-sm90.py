"""SGLang's registry refuses --attention-backend fa3 unless the GPU is SM90, or SM8x with a non-MLA model."""

from verification.cases.sglang._server import FA_BACKEND, create, reaches, runner

BACKEND = "sglang-server"
# The check reads the GPU's compute capability: the refusal is only observable off Hopper, the
# acceptance (control) only on it.
REQUIRES = {"cuda": True, "arch": ["sm75-sm89", "sm100+"], "packages": ["sglang.srt.layers.attention.attention_registry"]}
STEP_REQUIRES = {"control": {"cuda": True, "arch": "sm90"}}


def reproduce(ctx):
    # On SM8x only an MLA model is refused; elsewhere any model is.
    mla = ctx.cc[0] == 8
    ctx.note(f"compute capability {ctx.cc}, MLA model: {mla}")
    ctx.expect_error(create, "fa3", runner(mla=mla))


def control(ctx):
    # On SM90 both an MHA and an MLA model pass the check; the creator then imports and builds
    # FlashAttentionBackend (which stops on the stand-in runner, or on a missing sgl_kernel).
    for mla in (False, True):
        reaches(ctx, FA_BACKEND, create, "fa3", runner(mla=mla))
