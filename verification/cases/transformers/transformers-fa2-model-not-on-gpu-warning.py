"""transformers warns "... with a model not initialized on GPU. Make sure to move the model to GPU ..." when
FlashAttention is requested for a model loaded on CPU while torch.cuda.is_available() is True.

Nothing here can be decided on a CPU: the warning's branch needs torch to see a CUDA device, and on this
machine the same check takes its other branch (the no-GPU ValueError, transformers-fa2-no-gpu-available's
case) or stops before it; a GPU is not faked."""

BACKEND = "env-build"
REQUIRES = {"cuda": False}

WHY = ("needs torch.cuda.is_available() to be True: on a machine without a GPU the same check raises the "
       "no-GPU ValueError instead (transformers-fa2-no-gpu-available)")


def reproduce(ctx):
    ctx.skip(WHY)


def fix_1(ctx):
    ctx.skip("device_map=\"cuda\" loads onto a GPU: " + WHY)


def fix_2(ctx):
    ctx.skip("model.to(\"cuda\") needs a GPU: " + WHY)
