from tests.verify_fake import fakeattn


def reproduce(ctx):
    # the record claims head_dim 16 raises; the library only warns and goes on
    ctx.expect_error(fakeattn.attention, [[0.0] * 16], [[0.0] * 16], [[1.0] * 16])


def fix_1(ctx):
    out = ctx.call(fakeattn.attention, [[0.0] * 4], [[0.0] * 4], [[1.0] * 4])
    ctx.close(out, [[2.0] * 4], atol=1e-6)  # wrong expectation: refuted by the numbers
