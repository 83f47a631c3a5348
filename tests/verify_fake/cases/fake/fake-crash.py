from tests.verify_fake import fakeattn


def reproduce(ctx):
    fakeattn.crash_abort()


def fix_1(ctx):
    fakeattn.crash_segfault()


def control(ctx):
    out = ctx.call(fakeattn.attention, [[1.0]], [[1.0]], [[3.0]])
    ctx.close(out, [[3.0]], atol=1e-12)
