"""'cannot import name 'LlamaFlashAttention2' from 'transformers.models.llama.modeling_llama'':
transformers 4.48.0 replaced the per-backend attention classes with one class.

Imports only, no GPU and no download. The reproduce step runs on 4.48.0 and later; fix 1 (a
release before 4.48, and the record's check command) on 4.44.2; fix 2 (the try/except fallback
to LlamaAttention) on every release."""

from verification.cases.transformers._tf import needs, refute, version

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}
TIMEOUT = 300


def _import():
    from transformers.models.llama.modeling_llama import LlamaFlashAttention2

    return LlamaFlashAttention2


def reproduce(ctx):
    needs(ctx, low="4.48.0", why="the class was removed in 4.48.0")
    ctx.expect_error(_import)


def fix_1(ctx):
    needs(ctx, below="4.48.0", why="the fix pins a release before the removal")
    ctx.note(f"imported {ctx.call(_import)!r}")


def fix_2(ctx):
    def fallback():
        from transformers.models.llama.modeling_llama import LlamaAttention

        try:
            from transformers.models.llama.modeling_llama import LlamaFlashAttention2
        except ImportError:  # transformers >= 4.48
            LlamaFlashAttention2 = LlamaAttention
        return LlamaFlashAttention2, LlamaAttention

    got, attention = ctx.call(fallback)
    ctx.note(f"LlamaFlashAttention2 -> {got.__name__}")
    if version() >= (4, 48) and got is not attention:
        refute(ctx, f"on this release the fallback gave {got!r}, not LlamaAttention")
