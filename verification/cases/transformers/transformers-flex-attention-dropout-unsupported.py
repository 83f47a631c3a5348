"""A model loaded with attn_implementation="flex_attention" whose config has a non-zero
attention_dropout, run in training mode: transformers' flex_attention_forward refuses the dropout
with ValueError before any kernel runs.

The model is the tiny two-layer Llama of _tf (saved to a folder, loaded with from_pretrained, as a
checkpoint is), float32, with attention_dropout=0.1 passed to from_pretrained as a checkpoint's
config.json would carry it; model.train() as Trainer does; one forward pass on 16 tokens. On a GPU
(flex_attention compiles a Triton kernel there) everything runs on it; without one, the reproduce
and the SDPA fix run on the CPU (the refusal comes before the kernel) and the flex fixes are
skipped. Fixes are compared with the same checkpoint loaded with the eager implementation
(float32, eval mode): the model-level fp32 reference."""

from verification.cases.transformers._tf import needs, saved_model

BACKEND = "transformers"
REQUIRES = {"packages": ["torch", "transformers", "torch.nn.attention.flex_attention"]}
STEP_REQUIRES = {"fix_1": {"cuda": True}, "fix_2": {"cuda": True}}
TIMEOUT = 600

CHECK_FROM = "4.53"  # the refusal is in transformers 4.53.0 and later (the record's third condition)
TOL = {"atol": 1e-3, "rtol": 1e-3}  # float32 logits, flex/sdpa kernels against eager matmuls


def device(ctx) -> str:
    dev = "cuda" if ctx.torch.cuda.is_available() else "cpu"
    ctx.note(f"runs on {dev}" + (f" ({ctx.torch.cuda.get_device_name()})" if dev == "cuda" else ""))
    return dev


def load(ctx, dev: str, **kwargs):
    """from_pretrained(<tiny Llama folder>, dtype=float32, **kwargs), moved to `dev`."""
    from transformers import AutoModelForCausalLM

    m = AutoModelForCausalLM.from_pretrained(saved_model(), dtype=ctx.torch.float32, **kwargs)
    return m.to(dev)


def ids(ctx, dev: str):
    g = ctx.torch.Generator().manual_seed(0)
    return ctx.torch.randint(0, 128, (2, 16), generator=g).to(dev)


def eager_logits(ctx, dev: str):
    """The fp32 reference: the same checkpoint with eager attention, eval mode, no gradients."""
    m = load(ctx, dev, attn_implementation="eager").eval()
    with ctx.torch.no_grad():
        return m(ids(ctx, dev)).logits


def reproduce(ctx):
    needs(ctx, low=CHECK_FROM, why="4.52.4 and earlier have no such check")
    dev = device(ctx)
    m = load(ctx, dev, attn_implementation="flex_attention", attention_dropout=0.1)
    m.train()
    ctx.note(f"config: _attn_implementation={m.config._attn_implementation!r}, "
             f"attention_dropout={m.config.attention_dropout}, training={m.training}")
    ctx.expect_error(m, ids(ctx, dev))


def fix_1(ctx):
    """attention_dropout=0.0 passed to from_pretrained: training-mode forward runs and matches."""
    needs(ctx, low=CHECK_FROM)
    dev = device(ctx)
    m = load(ctx, dev, attn_implementation="flex_attention", attention_dropout=0.0)
    m.train()
    out = ctx.call(m, ids(ctx, dev))
    ctx.close(out.logits, eager_logits(ctx, dev), **TOL, what="flex (train, dropout 0.0) vs eager logits")


def fix_2(ctx):
    """The checkpoint's dropout kept (0.1), the model in eval mode: the flex forward runs and matches."""
    needs(ctx, low=CHECK_FROM)
    dev = device(ctx)
    m = load(ctx, dev, attn_implementation="flex_attention", attention_dropout=0.1).eval()
    with ctx.torch.no_grad():
        out = ctx.call(m, ids(ctx, dev))
    ctx.close(out.logits, eager_logits(ctx, dev), **TOL, what="flex (eval) vs eager logits")


def fix_3(ctx):
    """attn_implementation="sdpa" with the same dropout: training mode runs and applies the dropout
    (its logits differ from eval mode's), and eval mode matches the eager reference."""
    from errkb.verify.case import Refuted

    dev = device(ctx)
    m = load(ctx, dev, attn_implementation="sdpa", attention_dropout=0.1)
    m.train()
    ctx.seed(0)
    train = ctx.call(m, ids(ctx, dev)).logits.detach()
    m.eval()
    with ctx.torch.no_grad():
        evald = ctx.call(m, ids(ctx, dev)).logits
    moved = float((train - evald).abs().max())
    ctx.note(f"sdpa: largest change of a logit between train (dropout 0.1) and eval mode: {moved:.3g}")
    if moved <= 1e-4:
        raise Refuted("training-mode SDPA gave the eval-mode logits: no dropout was applied")
    ctx.close(evald, eager_logits(ctx, dev), **TOL, what="sdpa (eval) vs eager logits")
