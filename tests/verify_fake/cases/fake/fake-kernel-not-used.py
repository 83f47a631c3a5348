BACKEND = "fakeattn-warn"

from tests.verify_fake import fakeattn  # noqa: E402

X = [[0.1] * 12, [0.2] * 12]


def reproduce(ctx):
    ctx.expect_warning(fakeattn.attention, X, X, X)


def fix_1(ctx):
    out = ctx.call(fakeattn.attention, X, X, X, head_dim_limit=16)
    ctx.close(out, fakeattn.reference(X, X, X), atol=1e-9)
