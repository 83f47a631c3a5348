from tests.verify_fake import fakeattn

TIMEOUT = 3


def reproduce(ctx):
    fakeattn.hang()


def control(ctx):
    ctx.call(fakeattn.attention, [[1.0]], [[1.0]], [[1.0]])
