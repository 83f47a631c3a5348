from tests.verify_fake import fakeattn

Q = [[0.1, 0.2], [0.3, -0.1], [0.0, 0.5]]
K = [[0.2, 0.1], [-0.3, 0.4], [0.1, 0.1]]
V = [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
PAD = [[True, True, False]] * 3


def reproduce(ctx):
    ctx.expect_error(fakeattn.attention, Q, K, V, causal=True, mask=PAD)


def fix_1(ctx):
    both = [[PAD[i][j] and j <= i for j in range(3)] for i in range(3)]
    out = ctx.call(fakeattn.attention, Q, K, V, mask=both)
    ctx.close(out, fakeattn.reference(Q, K, V, mask=both), atol=1e-9)


def control(ctx):
    out = ctx.call(fakeattn.attention, Q, K, V, causal=True)
    ctx.close(out, fakeattn.reference(Q, K, V, causal=True), atol=1e-9)
