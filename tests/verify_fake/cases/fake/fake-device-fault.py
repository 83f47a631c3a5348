from tests.verify_fake import fakeattn


def reproduce(ctx):
    ctx.expect_error(fakeattn.device_fault)  # a CUDA fault is an error, and the worker is replaced


def control(ctx):
    out = ctx.call(fakeattn.attention, [[1.0]], [[1.0]], [[2.0]])
    ctx.close(out, [[2.0]], atol=1e-12)
