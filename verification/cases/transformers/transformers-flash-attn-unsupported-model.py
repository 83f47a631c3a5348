"""transformers refuses a FlashAttention implementation for a model class that does not declare
it: '<Class> does not support Flash Attention 2.0 yet. ...' (the flag check comes before any look
for the flash-attn package, so it runs on a CPU without flash-attn).

BERT from a tiny BertConfig built in code (no download). Fix 1 (SDPA for the same model) runs,
and its hidden states must match the same weights under eager attention; where BERT has no
SDPA path (before 4.41) the fix's caveat applies: the SDPA request is refused too, eager loads. Fix 2 (an upgrade that
adds support) is conditional on the architecture and fix 3 is about remote code on 5.x: not run."""

from verification.cases.transformers._tf import refute

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}
TIMEOUT = 300


def tiny_bert():
    from transformers import BertConfig

    return BertConfig(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_hidden_layers=2,
                      vocab_size=128, max_position_embeddings=64)


def bert(**kwargs):
    def run():
        from transformers import AutoModel

        return AutoModel.from_config(tiny_bert(), **kwargs)
    return run


def reproduce(ctx):
    ctx.expect_error(bert(attn_implementation="flash_attention_2"))


def fix_1(ctx):
    from transformers import BertModel

    t = ctx.torch
    eager = bert(attn_implementation="eager")().eval()
    want = "sdpa"
    if not getattr(BertModel, "_supports_sdpa", False):
        # The fix's caveat: a class without SDPA refuses it too; eager then.
        try:
            bert(attn_implementation="sdpa")()
            refute(ctx, "BertModel declares no SDPA here, yet the sdpa request loaded")
        except ValueError as exc:
            ctx.note(f"BertModel has no SDPA in this release (the caveat): {str(exc)[:160]}")
        want = "eager"
    model = ctx.call(bert(attn_implementation=want)).eval()
    impl = model.config._attn_implementation
    if impl != want:
        refute(ctx, f"BERT loaded with {impl!r}, not {want}", impl=impl)
    model.load_state_dict(eager.state_dict())
    ids = t.tensor([[1, 2, 3, 4, 5, 6, 7]])
    with t.no_grad():
        out = ctx.call(model, ids).last_hidden_state
        ref = eager(ids).last_hidden_state
    ctx.close(out, ref, atol=1e-4, rtol=1e-4, what="SDPA hidden states vs eager (same weights)")


def fix_2(ctx):
    ctx.skip("an upgrade helps only an architecture that gained FlashAttention later; BERT is the example here")


def fix_3(ctx):
    ctx.skip("about remote-code models on transformers 5.x, which this run does not have")
