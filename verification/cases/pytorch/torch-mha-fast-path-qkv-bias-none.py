"""nn.MultiheadAttention built with bias=False, batch-first, called as self-attention in eval mode
under no_grad: torch 1.13-2.0 send it to the fused torch._native_multi_head_attention with a None
input-projection bias, which the operator's argument parser refuses. Runs on the CPU (the fused
path exists there too) with PyPI's torch 2.0.1 and 2.5.1, each as the workers' interpreter.

reproduce: torch < 2.1, the module as the dev paste builds it (embed 64, 4 heads).
fix_1: torch >= 2.1 runs the same module under no_grad and agrees with the module's own Python
path (training mode, dropout 0) on the same weights.
fix_2: torch < 2.1, the record's workaround (only the MultiheadAttention modules in train mode)
runs under no_grad and agrees with a hand-written attention on the module's weights.
control: torch < 2.1, the same module with bias=True takes the fused path and runs."""

BACKEND = "sdpa"
REQUIRES = {"packages": ["torch"]}
STEP_REQUIRES = {"reproduce": {"torch": "<2.1"}, "fix_1": {"torch": ">=2.1"}, "fix_2": {"torch": "<2.1"},
                 "control": {"torch": "<2.1"}}
TIMEOUT = 120
B, L, E, H = 2, 10, 64, 4


def _module(ctx, bias=False):
    t = ctx.torch
    t.manual_seed(0)
    mha = t.nn.MultiheadAttention(E, H, bias=bias, batch_first=True).to(ctx.device).eval()
    x = t.randn(B, L, E, device=ctx.device)
    return mha, x


def _by_hand(ctx, mha, x):
    """Attention from the module's weights, written out (no bias: bias=False)."""
    t = ctx.torch
    q, k, v = (x @ w.T for w in mha.in_proj_weight.chunk(3, dim=0))
    split = lambda y: y.view(B, L, H, E // H).transpose(1, 2)  # noqa: E731
    q, k, v = split(q), split(k), split(v)
    p = t.softmax(q @ k.transpose(-1, -2) / (E // H) ** 0.5, dim=-1)
    o = (p @ v).transpose(1, 2).reshape(B, L, E)
    return o @ mha.out_proj.weight.T


def reproduce(ctx):
    t = ctx.torch
    mha, x = _module(ctx)
    ctx.note(f"torch {t.__version__}: in_proj_bias={mha.in_proj_bias}, out_proj.bias={mha.out_proj.bias}")
    with t.no_grad():
        ctx.expect_error(mha, x, x, x)
    with t.inference_mode():
        ctx.expect_error(mha, x, x, x)
    ctx.note("raised under torch.no_grad() and torch.inference_mode()")


def fix_1(ctx):
    t = ctx.torch
    mha, x = _module(ctx)
    with t.no_grad():
        out = ctx.call(mha, x, x, x)[0]
        mha.train()  # the Python path, dropout 0: the reference for the eval-mode call
        ref = mha(x, x, x)[0]
    ctx.close(out, ref, atol=1e-5, rtol=1e-5)
    ctx.close(out, _by_hand(ctx, mha, x), atol=1e-4, rtol=1e-4, what="output against attention by hand")


def fix_2(ctx):
    t = ctx.torch
    model = t.nn.Sequential(t.nn.Identity())
    mha, x = _module(ctx)
    model.append(mha)
    model.eval()
    for m in model.modules():
        if isinstance(m, t.nn.MultiheadAttention):
            m.train()
    if mha.dropout != 0.0:
        raise RuntimeError("the workaround needs dropout 0")
    with t.no_grad():
        out = ctx.call(mha, x, x, x)[0]
    ctx.close(out, _by_hand(ctx, mha, x), atol=1e-4, rtol=1e-4)


def control(ctx):
    t = ctx.torch
    mha, x = _module(ctx, bias=True)
    with t.no_grad():
        out = ctx.call(mha, x, x, x)[0]
        mha.train()
        ref = mha(x, x, x)[0]
    ctx.close(out, ref, atol=1e-5, rtol=1e-5)
