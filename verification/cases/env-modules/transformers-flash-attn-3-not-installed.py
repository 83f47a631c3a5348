"""transformers asked for FlashAttention 3 where no flash_attn_3 package is installed: 'the package
flash_attn_3 seems to be not installed.'

Reproduce: transformers 4.57.3 (the release of the record's 4.57.3 condition), torch 2.14.1 from PyPI, no
flash_attn_3 and no kernels package: a two-layer Llama saved from a config made in code, loaded with
`from_pretrained(folder, attn_implementation="flash_attention_3")` in a child process (the same model
as transformers-flash-attn-not-installed). Fix 3: the same model with attn_implementation="sdpa" loads
and its logits match the eager implementation's. Fix 1 compiles hopper/ for sm90; fix 2 downloads a
kernel from the Hugging Face Hub (not reachable here)."""

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200
TRANSFORMERS = "transformers==4.57.3"

MODEL = r'''
import tempfile, torch
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM
cfg = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
torch.manual_seed(0)
folder = tempfile.mkdtemp()
LlamaForCausalLM(cfg).save_pretrained(folder)
'''


def reproduce(ctx):
    path = [b.target_dir(ctx, TRANSFORMERS)]
    res = b.run_with_torch(ctx, MODEL + 'AutoModelForCausalLM.from_pretrained(folder, attn_implementation="flash_attention_3")',
                           path=path)
    ctx.note(res.summary())
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"])


def fix_1(ctx):
    ctx.skip("compiles FlashAttention-3's hopper/ extension (CUDA, sm90): not on this machine")


def fix_2(ctx):
    ctx.skip("downloads a kernel from the Hugging Face Hub, out of reach from this machine")


def fix_3(ctx):
    path = [b.target_dir(ctx, TRANSFORMERS)]
    code = MODEL + r'''
ids = torch.randint(0, 128, (1, 16))
out = {}
for impl in ("sdpa", "eager"):
    m = AutoModelForCausalLM.from_pretrained(folder, attn_implementation=impl, torch_dtype=torch.float32)
    out[impl] = m(ids).logits
print("MAXDIFF", float((out["sdpa"] - out["eager"]).abs().max()))
'''
    res = b.run_with_torch(ctx, code, path=path)
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
