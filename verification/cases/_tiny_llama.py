"""A two-layer Llama saved from a config made in code (no Hub), loaded in a child process with
one transformers release: the model the "FlashAttention package not installed" cases load, once
with the attention implementation the record is about and once with SDPA against eager."""

from verification.cases import _builds as b
from verification.cases import _venv

MODEL = r'''
import tempfile, torch
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM
cfg = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
torch.manual_seed(0)
folder = tempfile.mkdtemp()
LlamaForCausalLM(cfg).save_pretrained(folder)
'''

SDPA_AGAINST_EAGER = MODEL + r'''
ids = torch.randint(0, 128, (1, 16))
out = {}
for impl in ("sdpa", "eager"):
    m = AutoModelForCausalLM.from_pretrained(folder, attn_implementation=impl, torch_dtype=torch.float32)
    out[impl] = m(ids).logits
print("MAXDIFF", float((out["sdpa"] - out["eager"]).abs().max()))
'''


def expect_refusal(ctx, transformers: str, implementation: str) -> None:
    """Loading the model with `implementation` raises the record's message."""
    code = MODEL + f'AutoModelForCausalLM.from_pretrained(folder, attn_implementation="{implementation}")'
    res = b.run_with_torch(ctx, code, path=[b.target_dir(ctx, transformers)])
    ctx.note(res.summary())
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def sdpa_matches_eager(ctx, transformers: str) -> None:
    """The same model loads with attn_implementation="sdpa", without the record's message, and
    its logits match the eager implementation's."""
    res = b.run_with_torch(ctx, SDPA_AGAINST_EAGER, path=[b.target_dir(ctx, transformers)])
    ctx.note(res.summary())

    def loads():
        _venv.reraise(res.output, ctx.record["template"])
        _venv.reraise(res.output)
        diff = [float(line.split()[1]) for line in res.output.splitlines() if line.startswith("MAXDIFF")]
        if not diff:
            raise AssertionError(res.tail(600))
        return diff[0]

    diff = ctx.call(loads)
    ctx.close([diff], [0.0], atol=1e-4, what="sdpa logits against eager")
