"""transformers model loading: `attn_implementation=` of `AutoModel*.from_pretrained`/`from_config`
(any transformers class), `model.set_attn_implementation(...)` and the attention keys of training
frameworks' YAML configs (lint/training_configs.py), against the names each release accepts
(data/lint/choices.json), FlashAttention with a float32 dtype, and FlashAttention on pre-Ampere GPUs."""

from __future__ import annotations

import difflib
import json
import re
from functools import lru_cache

from errkb.lint import choices
from errkb.lint.analysis import QualName
from errkb.lint.launch import ConfigRule, target_release, value_fix
from errkb.lint.launch_python import AUTOCAST, mixed_precision_kind
from errkb.lint.rule import Example, arch_major, register
from errkb.lint.training_configs import PREFILTER as CONFIG_PREFILTER

_PY = "from transformers import AutoModelForCausalLM\n"
_TRL = "model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\n"  # a TRL/open-r1 recipe
_FLASH = ("flash_attention_2", "flash_attention_3", "flash_attention_4")
_FP32 = ("float32", "float")
_AUTOCAST = AUTOCAST


def _registers_custom_attention(ctx) -> bool:
    """A module that imports AttentionInterface or the ALL_ATTENTION_FUNCTIONS registry it wraps
    (at the top or inside a function, as lazy imports do) may register its own implementation names."""
    index = ctx.index
    if index is None:
        return False
    scopes = [index.root, *(scope for _, scope in index.functions)]
    return any(b.kind == "import" and (b.qualname or "").endswith(("AttentionInterface", "ALL_ATTENTION_FUNCTIONS"))
               for scope in scopes for bs in scope.bindings.values() for b in bs)


def _under_autocast(ctx, arg) -> bool:
    """Whether the call that holds argument `arg` runs inside `with torch.autocast(...)`: float32
    weights with the kernels fed half precision by autocast (the record's second fix)."""
    index = ctx.index
    for site in index.calls if index is not None else ():
        if any(a is arg for a in site.node.args):
            return any((t := index.resolve(w.call.func, w.scope)) and t <= _AUTOCAST for w in site.withs)
    return False


def _mixed_precision_elsewhere(ctx) -> bool:
    """Whether the module trains under a mixed precision that is not `with torch.autocast(...)`
    around the load and is not visibly off (EKB802 then stays silent: float32 master weights, half precision in
    the forward). It imports or calls any DeepSpeed name (precision in a JSON config), or imports
    or calls accelerate's Accelerator or transformers'/TRL's training arguments or argument
    parsers (launch_python.mixed_precision_kind), unless it calls them and every call turns
    mixed precision off literally: `Accelerator(mixed_precision="no")`, `bf16=False` and
    `fp16=False`; torch.autocast called anywhere counts too, unless `enabled=False` or float32, and
    so do FSDP's MixedPrecisionPolicy/MixedPrecision, unless without `param_dtype` or float32.
    An Accelerator without `mixed_precision` takes it from `accelerate launch` or
    its config, a parser from the command line: unknown, so silent."""
    index = ctx.index
    if index is None:
        return False
    got = getattr(index, "_errkb_mixed_precision", None)
    if got is None:
        got = index._errkb_mixed_precision = _find_mixed_precision(index)
    return got


def _find_mixed_precision(index) -> bool:
    scopes = [index.root, *(scope for _, scope in index.functions)]
    imported = {mixed_precision_kind(b.qualname) for scope in scopes for bs in scope.bindings.values()
                for b in bs if b.kind == "import" and b.qualname} - {None}
    if "deepspeed" in imported:
        return True
    calls = []
    for site in index.calls:
        kinds = {mixed_precision_kind(q) for q in index.resolve(site.node.func, site.scope)} - {None}
        if "deepspeed" in kinds:
            return True
        if kinds:
            calls.append((site, kinds))
    if not calls:
        return bool(imported)
    return not all(_precision_off(index, site, kinds) for site, kinds in calls)


def _precision_off(index, site, kinds) -> bool:
    """Whether this Accelerator / training-arguments call turns mixed precision off literally."""
    if any(a.star for a in site.node.args):  # **kwargs, *args: not visible
        return False
    given = {a.keyword.value: a.value for a in site.node.args if a.keyword is not None}

    def literal(name):
        return index.value(given[name], site.scope) if name in given else None

    if kinds == {"accelerate"}:
        return literal("mixed_precision") == "no"
    if kinds == {"args"}:
        return literal("bf16") is False and literal("fp16") is False
    if kinds == {"autocast"}:  # torch.autocast(..., enabled=False) or a float32 autocast
        dtype = literal("dtype")
        return literal("enabled") is False or (isinstance(dtype, QualName) and dtype.name == "torch.float32")
    if kinds == {"fsdp"}:  # FSDP casts the parameters only to a param_dtype it is given
        dtype = literal("param_dtype")
        return "param_dtype" not in given or (isinstance(dtype, QualName) and dtype.name == "torch.float32")
    return False


_FLASH_ALIAS = re.compile(r"(?:flash[-_ ]?attn|flash[-_ ]?attention|fa)[-_ ]?([234])", re.I)


def same_implementation(name: str, names) -> str | None:
    """The accepted spelling of the implementation `name` means, when only its case, spaces, `-`
    for `_`, or a short form of FlashAttention N (flash_attn_2, flash-attn2, fa2) is off."""
    m = _FLASH_ALIAS.fullmatch(name.strip())
    candidate = f"flash_attention_{m.group(1)}" if m else name.strip().lower().replace("-", "_")
    return candidate if candidate != name and candidate in names else None


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
    FIXES = {"transformers-attn-implementation-not-supported": 1}  # "Use one of the names the message lists"
    TOOL = "transformers"
    PREFILTER = ((b"attn_implementation", b"transformers"),) + CONFIG_PREFILTER
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
        # held-out triage (an SGLang fork's transformers backend): registered in the dict AttentionInterface wraps
        "from transformers import AutoModel\nfrom transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS\n"
        "ALL_ATTENTION_FUNCTIONS['sglang'] = fn\nm = AutoModel.from_config(cfg, attn_implementation='sglang')",
        # held-out-3 triage (transformers' own tests, vendored): a configuration class stores the
        # name unchecked (configuration_utils.py, 4.50.0.dev0 and 5.25.0); only model classes check it
        "from transformers import AutoConfig\ncfg = AutoConfig.from_pretrained('m', attn_implementation='foo-bar-baz')",
        "import transformers\ncfg = transformers.MistralConfig.from_pretrained('m', attn_implementation='foo')",
        # ... and a load the test expects to raise (with pytest.raises / self.assertRaises around it)
        "import unittest\nfrom transformers import AutoModel\nclass T(unittest.TestCase):\n"
        "    def test_wrong(self):\n        with self.assertRaises(ValueError) as cm:\n"
        "            AutoModel.from_pretrained('m', attn_implementation='foo')\n",
        "import pytest\nfrom transformers import AutoModel\ndef test_wrong():\n"
        "    with pytest.raises(ValueError, match='not supported'):\n"
        "        AutoModel.from_pretrained('m', attn_implementation='foo')\n",
        # training configs: each framework's own key, mapped to what reaches transformers
        Example(_TRL + "attn_implementation: flash_attention_2\ntorch_dtype: bfloat16\n", path="recipe.yaml"),
        Example("base_model: m\nattn_implementation: xformers\n", path="axolotl.yml"),  # axolotl's own patch
        Example("model_name_or_path: m\nstage: sft\nflash_attn: fa2\n", path="llama3_lora_sft.yaml"),
        Example("attn_impl: flash_attn\ntorch_dtype: bfloat16\n", path="swift.yaml"),
        Example(_TRL + "attn_implementation: ${oc.env:ATTN_IMPL}\n", path="conf.yaml"),  # Hydra/OmegaConf
    ]
    INVALID = [
        Example(_PY + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attn_2')",
                fixed=_PY + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2')"),
        Example(_TRL + "attn_implementation: SDPA\n", path="recipe.yaml",
                fixed=_TRL + "attn_implementation: sdpa\n"),
        Example(_TRL + "attn_implementation: flash_attention_3\n", path="recipe.yaml",
                versions=(("transformers", "4.52.0"),)),
        Example("attn_impl: fa2\ntorch_dtype: bfloat16\n", path="swift.yaml"),  # ms-swift passes it on as written
        Example("base_model: m\nattn_implementation: flash_attention_4\nbf16: auto\n", path="axolotl.yml",
                versions=(("transformers", "4.56.0"),)),
        Example("import transformers\ncfg = transformers.AutoConfig.from_pretrained('m')\n"
                "m = transformers.AutoModel.from_config(cfg, attn_implementation='FLASH_ATTN')"),
        Example(_PY + "m = AutoModelForCausalLM.from_pretrained('m')\nm.set_attn_implementation('fa3')",
                fixed=_PY + "m = AutoModelForCausalLM.from_pretrained('m')\nm.set_attn_implementation('flash_attention_3')"),
        # after the `with pytest.raises(...)` block, a load is checked again
        Example("import pytest\nfrom transformers import AutoModel\ndef test_wrong():\n"
                "    with pytest.raises(ValueError):\n        AutoModel.from_pretrained('m', attn_implementation='foo')\n"
                "    AutoModel.from_pretrained('m', attn_implementation='fa2')\n",
                fixed="import pytest\nfrom transformers import AutoModel\ndef test_wrong():\n"
                "    with pytest.raises(ValueError):\n        AutoModel.from_pretrained('m', attn_implementation='foo')\n"
                "    AutoModel.from_pretrained('m', attn_implementation='flash_attention_2')\n"),
        Example(_PY + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_3')",
                versions=(("transformers", "4.52.0"),)),
    ]

    def check_launch(self, launch, ctx):
        setting = launch.get("attn_implementation")
        if setting is None or setting.text is None or _registers_custom_attention(ctx):
            return
        name = setting.text
        rel, note = target_release(ctx, "transformers", launch)
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
                    + (f"; did you mean {' or '.join(close)}?" if close else "") + note)
            text = f'Specified `attn_implementation="{name}"` is not supported. The only possible arguments are ' \
                   '`attn_implementation="eager"`.'  # the first sentence upstream prints (4.56+)
            rep = self.at(setting, text=text, hint=hint)
            fixed = same_implementation(name, names)
            if fixed and setting.spelled in ("attn_implementation", "set_attn_implementation"):
                # (not under a framework's own key: LLaMA-Factory, ms-swift and axolotl name things their way)
                rep.fix = value_fix(setting, fixed, f"Use {fixed}, the name transformers gives that implementation")
            yield rep


@register
class TransformersFlashAttnFloat32(ConfigRule):
    """FlashAttention (`attn_implementation='flash_attention_2'`/3/4) with an explicit float32
    dtype (`torch_dtype=`/`dtype=` torch.float32, 'float32'): FlashAttention computes only in
    float16/bfloat16. transformers 4.36 refuses to load; later releases warn and the first forward
    pass fails inside flash-attn unless autocast is on. Float32 weights are the master-weight
    pattern of mixed-precision training, so the load is left alone inside `with
    torch.autocast(...)`, and in a module that trains under a mixed precision it cannot see as
    autocast: one that builds accelerate's `Accelerator` (unless with `mixed_precision="no"`;
    without it, `accelerate launch` or its config decides), uses transformers'
    `TrainingArguments`/`Seq2SeqTrainingArguments`/`HfArgumentParser` or TRL's configs or
    `TrlParser` (unless every such call passes `bf16=False` and `fp16=False`), or imports
    DeepSpeed (precision from its JSON config), or runs anything under `torch.autocast(...)`
    elsewhere (the forward, as the tenth held-out round's distillation script did; unless every
    such autocast is `enabled=False` or float32), or shards the model with FSDP's mixed precision
    (`MixedPrecisionPolicy`/`MixedPrecision` with a `param_dtype` other than float32: the
    eighteenth round's FSDP2 trainer). A trainer is not counted by itself: its precision is that
    of the arguments it is given."""

    CODE = "EKB802"
    NAME = "transformers-flash-attn-float32"
    RECORDS = ("transformers-fa2-fp32-dtype-warning",)
    TOOL = "transformers"
    PREFILTER = ((b"flash_attention_", b"float32", b"from_"), (b"flash_attention_", b"torch.float", b"from_"),
                 (b"attn_impl", b"bf16:"), (b"flash_attention:", b"bf16:"))
    HINT = "load with dtype=torch.bfloat16 (or float16), or use attn_implementation='sdpa' for float32"
    VALID = [
        "import torch\n" + _PY + "AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2', "
        "torch_dtype=torch.bfloat16)",
        "import torch\n" + _PY + "AutoModelForCausalLM.from_pretrained('m', attn_implementation='sdpa', dtype=torch.float32)",
        # a training config whose trainer runs under bf16 autocast (TRL's default), or with float32 unsure
        Example(_TRL + "attn_implementation: flash_attention_2\ntorch_dtype: float32\nbf16: true\n", path="r.yaml"),
        Example(_TRL + "attn_implementation: flash_attention_2\ndtype: float32\n", path="r.yaml"),
        Example("base_model: m\nflash_attention: true\nbf16: false\nfp16: true\n", path="axolotl.yml"),
        # corpus triage (verl's tests/models/test_engine.py): float32 weights loaded and run under autocast
        "import torch\n" + _PY + "with torch.device('cuda'), torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n"
        "    m = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.float32, "
        "attn_implementation='flash_attention_2')",
        # ninth held-out round (DPO/MLE training scripts): float32 master weights under Accelerate's
        # bf16, or under whatever `accelerate launch` sets (no mixed_precision: unknown)
        "import torch\nfrom accelerate import Accelerator\n" + _PY + "def main(args):\n"
        "    if args.mixed_precision:\n"
        "        accelerator = Accelerator(gradient_accumulation_steps=8, mixed_precision='bf16')\n"
        "    else:\n        accelerator = Accelerator(gradient_accumulation_steps=8)\n"
        "    model = AutoModelForCausalLM.from_pretrained(args.model, attn_implementation='flash_attention_2', "
        "torch_dtype=torch.float32)\n    return accelerator.prepare(model)",
        # ninth held-out round (SFT with the HF Trainer and DeepSpeed ZeRO): bf16/fp16 from the command line
        "import torch\nimport transformers\nfrom transformers import HfArgumentParser, TrainingArguments\n"
        "from deepspeed import zero\n" + _PY + "def train():\n"
        "    parser = HfArgumentParser((ModelArguments, TrainingArguments))\n"
        "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
        "    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, "
        "attn_implementation='flash_attention_2', torch_dtype=torch.float32)\n"
        "    return transformers.Trainer(model=model, args=training_args)",
        # each alone: a parser (precision from the command line), Accelerator() (from `accelerate
        # launch`), DeepSpeed (from its JSON config), training arguments only annotated here
        "import torch\nfrom transformers import HfArgumentParser, TrainingArguments\n" + _PY
        + "args, = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()\n"
        "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2', dtype=torch.float32)",
        "import torch\nimport accelerate\n" + _PY + "acc = accelerate.Accelerator()\n"
        "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2', dtype=torch.float32)",
        "import torch\nimport deepspeed\n" + _PY
        + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2', dtype=torch.float32)\n"
        "engine, *_ = deepspeed.initialize(model=m, config='ds.json')",
        "import torch\nfrom transformers import TrainingArguments\n" + _PY + "def load(args: TrainingArguments):\n"
        "    return AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2', dtype=torch.float32)",
        # tenth held-out round (a distillation script): the load outside autocast, the forward under it
        "import torch\n" + _PY + "m = AutoModelForCausalLM.from_pretrained('m', "
        "attn_implementation='flash_attention_2', dtype=torch.float32)\n"
        "def step(batch):\n    with torch.autocast('cuda', dtype=torch.bfloat16):\n        return m(**batch)",
        # eighteenth held-out round (an FSDP2 trainer): float32 master weights, bfloat16 parameters in the forward
        "import torch\nfrom torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard\n" + _PY
        + "def load(name, dtype):\n    m = AutoModelForCausalLM.from_pretrained(name, dtype=torch.float32, "
        "attn_implementation='flash_attention_2')\n"
        "    fully_shard(m, mp_policy=MixedPrecisionPolicy(param_dtype=getattr(torch, dtype)))\n    return m",
        # TRL's configs turn bf16 on unless fp16 is set
        "import torch\nfrom trl import SFTConfig, SFTTrainer\n" + _PY
        + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2', dtype=torch.float32)\n"
        "SFTTrainer(model=m, args=SFTConfig(output_dir='out'))",
    ]
    INVALID = [
        Example("import torch\n" + _PY + "AutoModelForCausalLM.from_pretrained('m', "
                "attn_implementation='flash_attention_2', torch_dtype=torch.float32)"),
        Example(_TRL + "attn_implementation: flash_attention_2\ndtype: float32\nbf16: false\nfp16: false\n",
                path="recipe.yaml"),
        # axolotl: no half precision asked for, so resolve_dtype loads float32
        Example("base_model: m\nflash_attention: true\nbf16: false\n", path="axolotl.yml"),
        Example(_PY + "AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_3', dtype='float32')"),
        # training machinery with mixed precision literally off: the forward runs in float32
        Example("import torch\n" + _PY + "m = AutoModelForCausalLM.from_pretrained('m', "
                "attn_implementation='flash_attention_2', dtype=torch.float32)\n"
                "with torch.autocast('cuda', enabled=False):\n    m(x)"),
        Example("import torch\nfrom torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard\n" + _PY
                + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2', "
                "dtype=torch.float32)\nfully_shard(m, mp_policy=MixedPrecisionPolicy(reduce_dtype=torch.float32))"),
        Example("import torch\nfrom accelerate import Accelerator\n" + _PY
                + "accelerator = Accelerator(mixed_precision='no')\n"
                "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2', "
                "torch_dtype=torch.float32)"),
        Example("import torch\nfrom transformers import Trainer, TrainingArguments\n" + _PY
                + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2', "
                "torch_dtype=torch.float32)\n"
                "Trainer(model=m, args=TrainingArguments(output_dir='o', bf16=False, fp16=False))"),
        Example("import torch\nfrom trl import SFTConfig\n" + _PY
                + "cfg = SFTConfig(output_dir='o', bf16=False, fp16=False)\n"
                "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2', dtype=torch.float32)"),
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
            if value in _FP32 and not _under_autocast(ctx, dtype.anchor) and not _mixed_precision_elsewhere(ctx):
                template = site_template("transformers", f"Flash Attention {impl.text[-1]} only supports")
                text = template.format(class_name="the model", dtype="torch.float32") if template else None
                yield self.at(dtype, fa_version=impl.text[-1], details="", text=text)


@register
class TransformersFlashAttnPreAmpere(ConfigRule):
    """FlashAttention 2 or 3 (`attn_implementation='flash_attention_2'`/`'flash_attention_3'`, or a
    training config's FlashAttention switch) on Volta or Turing GPUs (sm70, sm75: V100, T4, RTX 20xx):
    flash-attn's kernels need compute capability 8.0, and its first forward pass raises. transformers
    does not check the GPU when it loads, and LLaMA-Factory only checks that flash-attn is installed.
    Fires only when the target archs include sm70 or sm75 (`--gpu-arch sm75`), which the default does not."""

    CODE = "EKB803"
    NAME = "transformers-flash-attn-pre-ampere"
    RECORDS = ("fa2-ampere-gpu-required",)
    TOOL = "transformers"
    ARCH_DEPENDENT = True
    PREFILTER = ((b"flash_attention_", b"transformers"),) + CONFIG_PREFILTER
    HINT = "use attn_implementation='sdpa' (or eager) on {archs}; FlashAttention 2/3 need compute capability 8.0+"
    VALID = [
        Example(_PY + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2')"),
        Example(_PY + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='sdpa')", archs=("sm75",)),
        Example("model_name_or_path: m\nflash_attn: sdpa\n", path="llama3_lora_sft.yaml", archs=("sm75",)),
    ]
    INVALID = [
        Example(_PY + "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2')",
                archs=("sm75", "sm80")),
        Example(_PY + "m = AutoModelForCausalLM.from_pretrained('m')\nm.set_attn_implementation('flash_attention_3')",
                archs=("sm70",)),
        Example("model_name_or_path: m\nflash_attn: fa2\n", path="llama3_lora_sft.yaml", archs=("sm75",)),
        Example("base_model: m\nflash_attention: true\nbf16: auto\n", path="axolotl.yml", archs=("sm75",)),
        Example(_TRL + "attn_implementation: flash_attention_2\n", path="recipe.yaml", archs=("sm70", "sm75")),
    ]

    def check_launch(self, launch, ctx):
        impl = launch.get("attn_implementation")
        old = [a for a in ctx.archs if arch_major(a) < 8]
        if impl is not None and impl.text in ("flash_attention_2", "flash_attention_3") and old:
            yield self.at(impl, hint=self.HINT.format(archs=", ".join(old)))


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
