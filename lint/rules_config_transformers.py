"""transformers model loading: `attn_implementation=` of `AutoModel*.from_pretrained`/`from_config`
(any transformers class) and `model.set_attn_implementation(...)`, against the names each release
accepts (data/lint/choices.json), and FlashAttention with a float32 dtype."""

from __future__ import annotations

import difflib
import json
from functools import lru_cache

from errkb.lint import choices
from errkb.lint.analysis import QualName
from errkb.lint.launch import ConfigRule, target_version
from errkb.lint.rule import Example, register

_PY = "from transformers import AutoModelForCausalLM\n"
_FLASH = ("flash_attention_2", "flash_attention_3", "flash_attention_4")
_FP32 = ("float32", "float")
_AUTOCAST = frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast",
                       "torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"})


def _registers_custom_attention(ctx) -> bool:
    """A module that imports AttentionInterface (at the top or inside a function, as lazy
    imports do) may register its own implementation names."""
    index = ctx.index
    if index is None:
        return False
    scopes = [index.root, *(scope for _, scope in index.functions)]
    return any(b.kind == "import" and (b.qualname or "").endswith("AttentionInterface")
               for scope in scopes for bs in scope.bindings.values() for b in bs)


def _under_autocast(ctx, arg) -> bool:
    """Whether the call that holds argument `arg` runs inside `with torch.autocast(...)`: float32
    weights with the kernels fed half precision by autocast (the record's second fix)."""
    index = ctx.index
    for site in index.calls if index is not None else ():
        if any(a is arg for a in site.node.args):
            return any((t := index.resolve(w.call.func, w.scope)) and t <= _AUTOCAST for w in site.withs)
    return False


@register
class TransformersUnknownAttnImplementation(ConfigRule):
    """An `attn_implementation` name transformers does not know: a misspelling (flash_attn_2, fa2,
    'sdpa '), another project's name (FLASH_ATTN, fa3, triton), or one newer than the installed
    release (flex_attention before 4.48, flash_attention_3 before 4.56, flash_attention_4 before
    5.x in the releases read). Hub kernel ids ('org/repo') and names a module registers through
    AttentionInterface are not judged. Without a target transformers version only names no release
    accepts are reported."""

    CODE = "EKB801"
    NAME = "transformers-unknown-attn-implementation"
    RECORDS = ("transformers-attn-implementation-not-supported",)
    TOOL = "transformers"
    PREFILTER = ((b"attn_implementation", b"transformers"),)
    VALID = [
        _PY + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='sdpa')",
        _PY + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='kernels-community/flash-attn')",
        "from transformers import AttentionInterface, AutoModel\n"
        "AttentionInterface.register('my_attn', fn)\nAutoModel.from_pretrained('m', attn_implementation='my_attn')",
        # SkyRL's model wrapper: the import and the registration are inside the method that loads
        "from transformers import AutoModel\ndef load():\n    from transformers import AttentionInterface\n"
        "    AttentionInterface.register('custom_flex', fn)\n    m = AutoModel.from_pretrained('m')\n"
        "    m.set_attn_implementation('custom_flex')",
        Example(_PY + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flex_attention')",
                versions=(("transformers", "4.48.0"),)),
    ]
    INVALID = [
        Example(_PY + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attn_2')"),
        Example("import transformers\ncfg = transformers.AutoConfig.from_pretrained('m')\n"
                "m = transformers.AutoModel.from_config(cfg, attn_implementation='FLASH_ATTN')"),
        Example(_PY + "m = AutoModelForCausalLM.from_pretrained('m')\nm.set_attn_implementation('fa3')"),
        Example(_PY + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_3')",
                versions=(("transformers", "4.52.0"),)),
    ]

    def check_launch(self, launch, ctx):
        setting = launch.get("attn_implementation")
        if setting is None or setting.text is None or _registers_custom_attention(ctx):
            return
        name = setting.text
        rel = choices.release_for("transformers", target_version(ctx, "transformers"))
        if "/" in name and (rel is None or rel.value("hub_kernels", False)):
            return
        if rel is not None:
            wrong = name not in (rel.choices("attn_implementation") or (name,))
        else:
            wrong = not any(name in (r.choices("attn_implementation") or ()) for r in choices.releases("transformers"))
        if wrong:
            shown = rel or choices.newest("transformers", "attn_implementation")
            names = shown.choices("attn_implementation")
            ever = choices.history("transformers", "attn_implementation",
                                   lambda r: name in (r.choices("attn_implementation") or ()))
            close = difflib.get_close_matches(name.lower(), names, n=2)
            hint = (f"{name!r} is {ever}; transformers {shown.version} accepts {', '.join(names)}"
                    + (f"; did you mean {' or '.join(close)}?" if close else ""))
            text = f'Specified `attn_implementation="{name}"` is not supported. The only possible arguments are ' \
                   '`attn_implementation="eager"`.'  # the first sentence upstream prints (4.56+)
            yield self.at(setting, text=text, hint=hint)


@register
class TransformersFlashAttnFloat32(ConfigRule):
    """FlashAttention (`attn_implementation='flash_attention_2'`/3/4) with an explicit float32
    dtype (`torch_dtype=`/`dtype=` torch.float32, 'float32'): FlashAttention computes only in
    float16/bfloat16. transformers 4.36 refuses to load; later releases warn and the first forward
    pass fails inside flash-attn unless autocast is on. A load inside `with torch.autocast(...)`
    is left alone."""

    CODE = "EKB802"
    NAME = "transformers-flash-attn-float32"
    RECORDS = ("transformers-fa2-fp32-dtype-warning",)
    TOOL = "transformers"
    PREFILTER = ((b"flash_attention_", b"float32", b"from_"), (b"flash_attention_", b"torch.float", b"from_"))
    HINT = "load with dtype=torch.bfloat16 (or float16), or use attn_implementation='sdpa' for float32"
    VALID = [
        "import torch\n" + _PY + "AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2', "
        "torch_dtype=torch.bfloat16)",
        "import torch\n" + _PY + "AutoModelForCausalLM.from_pretrained('m', attn_implementation='sdpa', dtype=torch.float32)",
        # corpus triage (verl's tests/models/test_engine.py): float32 weights loaded and run under autocast
        "import torch\n" + _PY + "with torch.device('cuda'), torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n"
        "    m = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.float32, "
        "attn_implementation='flash_attention_2')",
    ]
    INVALID = [
        Example("import torch\n" + _PY + "AutoModelForCausalLM.from_pretrained('m', "
                "attn_implementation='flash_attention_2', torch_dtype=torch.float32)"),
        Example(_PY + "AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_3', dtype='float32')"),
    ]

    def check_launch(self, launch, ctx):
        impl = launch.get("attn_implementation")
        if impl is None or impl.text not in _FLASH:
            return
        for key in ("torch_dtype", "dtype"):
            dtype = launch.get(key)
            if dtype is None:
                continue
            value = dtype.value.name.removeprefix("torch.") if isinstance(dtype.value, QualName) else dtype.value
            if value in _FP32 and not _under_autocast(ctx, dtype.anchor):
                template = site_template("transformers", f"Flash Attention {impl.text[-1]} only supports")
                text = template.format(class_name="the model", dtype="torch.float32") if template else None
                yield self.at(dtype, fa_version=impl.text[-1], details="", text=text)


@lru_cache(maxsize=8)
def site_template(package: str, prefix: str) -> str | None:
    """The harvested message template (data/sites) that starts with `prefix`: upstream's full
    words, read from the dataset rather than written here."""
    from errkb import layout, store

    try:
        lines = layout.sites_path(store.default_data_dir(), package).read_text().splitlines()
    except OSError:
        return None
    found = sorted(t for t in (json.loads(line).get("template", "") for line in lines if line.strip())
                   if t.startswith(prefix) and "{class_name}" in t and "{dtype}" in t)
    return found[-1] if found else None
