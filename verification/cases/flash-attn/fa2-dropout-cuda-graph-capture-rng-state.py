"""flash-attn 2.0.0-2.0.1 save the CUDA RNG state from Python in every forward with dropout
(flash_attn/flash_attn_interface.py of v2.0.1, line 92 of FlashAttnQKVPackedFunc.forward and the
same line in the other autograd functions: `rng_state = torch.cuda.get_rng_state() if dropout_p >
0 else None`), before the kernel runs; inside a CUDA graph capture torch refuses that read.

The record's message is torch's (at::cuda::assertNotCapturing, reached from
CUDAGeneratorImpl::current_seed), so the step makes exactly that call, torch.cuda.get_rng_state(),
inside torch.cuda.graph capture on this GPU, with the torch of the machine: flash-attn 2.0.1 itself
is not installed there (its kernel is never reached: the read comes first). Whatever the read does
is kept; so is what torch says for the generator's other reads during capture (initial_seed,
get_offset), as notes, since the record does not pin a torch release. Read from torch 2.11.0's
libtorch_cuda.so on a CPU machine (objdump, 2026-12-07): CUDAGeneratorImpl::current_seed() returns
the seed with no capture check, and philox_offset_per_thread() returns the graph's own offset while
a capture is on, so get_state() (what torch.cuda.get_rng_state() calls) is expected to return
there: a `refuted` reproduce on that torch says the message belongs to older releases.

The control is the capture-safe way the fix (flash-attn 2.0.2 and later) relies on: a dropout whose
Philox seed and offset come from the generator's graph-safe API (torch's own dropout kernel)
captured in a CUDA graph and replayed: every output element is 0 or x / (1 - p), about 1 - p of
them are kept, and two replays draw different masks."""

BACKEND = "sdpa"
REQUIRES = {"cuda": True, "packages": ["torch"]}
TIMEOUT = 120

P = 0.1


def _captured(ctx, fn):
    """fn() run inside a torch.cuda.graph capture (on the side stream torch.cuda.graph makes);
    (result, exception or None)."""
    t = ctx.torch
    g = t.cuda.CUDAGraph()
    try:
        with t.cuda.graph(g):
            return fn(), None
    except Exception as exc:  # noqa: BLE001 - handed back to the step
        return None, exc


def _side_notes(ctx):
    """What torch says for the generator's other reads during capture (notes only)."""
    t = ctx.torch
    gen = t.cuda.default_generators[t.cuda.current_device()]
    for label, fn in (("torch.cuda.initial_seed()", t.cuda.initial_seed),
                      ("default_generator.get_offset()", getattr(gen, "get_offset", None))):
        if fn is None:
            continue
        _, exc = _captured(ctx, fn)
        ctx.note(f"during capture, {label}: " + (f"{type(exc).__name__}: {str(exc)[:200]}" if exc else "returned"))


def reproduce(ctx):
    t = ctx.torch
    t.cuda.init()
    ctx.note(f"torch {t.__version__}: torch.cuda.get_rng_state() inside torch.cuda.graph capture "
             "(flash-attn v2.0.1's forward, dropout_p > 0)")

    def flash_attn_201_rng_save():
        result, exc = _captured(ctx, t.cuda.get_rng_state)
        if exc is not None:
            raise exc
        return result

    try:
        ctx.expect_error(flash_attn_201_rng_save)
    finally:
        _side_notes(ctx)


def control(ctx):
    from errkb.verify.case import Refuted

    t = ctx.torch
    x = t.randn(1 << 16, device="cuda", dtype=t.float32) + 3.0  # away from 0, so a dropped element is plain
    out = t.empty_like(x)
    for _ in range(2):  # warm up outside the capture
        out.copy_(t.nn.functional.dropout(x, P, training=True))
    t.cuda.synchronize()

    def captured_dropout():
        out.copy_(t.nn.functional.dropout(x, P, training=True))

    graph = t.cuda.CUDAGraph()
    with t.cuda.graph(graph):
        ctx.call(captured_dropout)  # a claimed-good call: any exception (the record's among them) refutes
    g_out = []
    for _ in range(2):
        graph.replay()
        t.cuda.synchronize()
        g_out.append(out.clone())
    for o in g_out:
        kept = o != 0
        ref = t.where(kept, x / (1 - P), t.zeros_like(x))
        ctx.close(o, ref, atol=1e-5, rtol=1e-6, what="replayed dropout vs x / (1 - p) where kept")
        frac = float(kept.float().mean())
        ctx.note(f"kept {frac:.4f} of the elements (1 - p = {1 - P})")
        if abs(frac - (1 - P)) > 0.01:
            raise Refuted(f"the replayed dropout kept {frac:.4f} of the elements, not about {1 - P}")
    if bool(((g_out[0] != 0) == (g_out[1] != 0)).all()):
        raise Refuted("two replays drew the same mask: the captured dropout does not advance its offset")
