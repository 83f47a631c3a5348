"""SGLang's FlashAttention backend vetoes elastic-EP CUDA graph recapture for an MLA model unless it is FA3."""

from verification.cases.sglang._server import fa_backend

BACKEND = "sglang-server"
# the FA backend itself is imported by the helpers, with sgl_kernel stood in where it does not load
REQUIRES = {"packages": ["sglang.srt.server_args"]}


def reproduce(ctx):
    # The decode backend asked before recapture: --attention-backend fa4 (fa_impl_ver 4), MLA model.
    ctx.expect_error(fa_backend(ctx, 4, use_mla=True).validate_elastic_cuda_graph_recapture)


def control(ctx):
    # FA3 with the same MLA model, and FA4 with an MHA model, let recapture go ahead.
    ctx.call(fa_backend(ctx, 3, use_mla=True).validate_elastic_cuda_graph_recapture)
    ctx.call(fa_backend(ctx, 4, use_mla=False).validate_elastic_cuda_graph_recapture)
