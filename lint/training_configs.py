"""Attention settings in the YAML configs of training frameworks, read the way each framework reads them.

Users of fine-tuning and RL frameworks rarely call `from_pretrained`: they write a YAML file and the
framework hands its values to transformers. Each framework spells the setting its own way; the key
names, values and defaults below were read from each framework's own code (the releases named):

- TRL (1.16.0 and 0.19.1 `ModelConfig`) and every config that forwards a plain `attn_implementation`
  to `from_pretrained` (open-r1 recipes, verl's `override_config`, ...): `attn_implementation` as
  written; the load dtype `dtype` (TRL 1.x) or `torch_dtype` (0.x); mixed precision `bf16`/`fp16`.
- axolotl (0.19.0; a config with `base_model`): `attn_implementation`, or one of the legacy flags set
  true, mapped as `LEGACY_ATTN_FLAG_TO_IMPL` maps them (the first in its order wins). axolotl checks
  the name itself first, so only the names it passes on to transformers are judged here (its own
  xformers, sage, fp8 and flash_attention_torch are patches, not transformers names). The load dtype
  is derived (`resolve_dtype`): `bf16`/`bfloat16` true → bfloat16, `fp16`/`float16`/`load_in_8bit`
  true → float16, else float32; `bf16` defaults to 'auto'.
- LLaMA-Factory (0.9.5; a config with `model_name_or_path`, or `model` in its v1 trainer):
  `flash_attn` fa2 → flash_attention_2, sdpa → sdpa, disabled → eager, auto → left to transformers;
  v1 takes eager/sdpa/flash_attention_2 as written. It loads with dtype 'auto', never float32 by config.
- ms-swift (4.6.0 `ModelArguments`): `attn_impl` flash_attn → flash_attention_2, any other name as
  written; `torch_dtype`; float32 weights train under fp16 autocast unless `fp16` is false.

RL frameworks keep the engine's own arguments in a section named after the engine, as the engine
names them: verl's rollout `engine_kwargs: {vllm: {...}, sglang: {...}}` (verl commit 035682ed,
verl/trainer/config/rollout/rollout.yaml) and AReaL's top-level `sglang:` and `vllm:` sections
(AReaL commit 00d07c04, examples/math/gsm8k_grpo.yaml). Each such section is a Launch of that engine,
form 'framework', as the same arguments passed on the command line (`...engine_kwargs.sglang.X=`).

Each training-framework setting becomes a transformers Launch (form 'config'), so the transformers rules judge a YAML key as
they judge a `from_pretrained` keyword. The float32 dtype is set only where the config rules out
autocast (mixed precision explicitly off), because FlashAttention under autocast gets half precision.
"""

from __future__ import annotations

from errkb.lint.launch import UNKNOWN, Launch, Setting, shell_value

# the byte groups a YAML file needs for these settings (the rules add them to their prefilter)
PREFILTER = ((b"attn_implementation:",), (b"attn_impl:",), (b"flash_attn:",), (b"flash_attention:",),
             (b"sdp_attention:",), (b"flex_attention:",), (b"eager_attention:",))
MARKERS = (b"attn_impl", b"flash_attn", b"flash_attention", b"sdp_attention", b"flex_attention", b"eager_attention")

# axolotl 0.19.0 utils/schemas/enums.py: legacy flag -> name, in the order axolotl tries them
AXOLOTL_LEGACY = (("xformers_attention", "xformers"), ("sage_attention", "sage"), ("flex_attention", "flex_attention"),
                  ("flash_attention", "flash_attention_2"), ("sdp_attention", "sdpa"), ("eager_attention", "eager"))
# names axolotl passes on to transformers (CANONICAL_ATTN_IMPLS less its own patches; hub paths too)
AXOLOTL_TO_TRANSFORMERS = {"eager", "sdpa", "flash_attention_2", "flash_attention_3", "flash_attention_4",
                           "flex_attention"}
# LLaMA-Factory 0.9.5 AttentionFunction (v0) and v1's names -> what reaches transformers
LLAMAFACTORY = {"fa2": "flash_attention_2", "sdpa": "sdpa", "disabled": "eager", "eager": "eager",
                "flash_attention_2": "flash_attention_2", "auto": None, "fa3": None}


def _scalar(node):
    import yaml

    return node if isinstance(node, yaml.ScalarNode) else None


def _flag(node) -> bool | None:
    """A YAML boolean (True/False), or None when the node is not one."""
    node = _scalar(node)
    if node is None or not node.tag.endswith(":bool"):
        return None
    return node.value.lower() in ("true", "yes", "on", "y")


def _text(node) -> str | None:
    node = _scalar(node)
    return node.value if node is not None and node.tag.endswith(":str") else None


def config_launches(fields: dict, span_of) -> list[Launch]:
    """The transformers Launch of one YAML mapping (`fields`: key -> node), or none.
    `span_of(node)` gives a scalar's span in the file."""
    if "base_model" in fields:
        return _axolotl(fields, span_of)
    if "flash_attn" in fields and ("model_name_or_path" in fields or "model" in fields):
        got = _llamafactory(fields, span_of)
        if got:
            return got
    for key in ("attn_implementation", "attn_impl"):
        if key in fields:
            return _plain(fields, key, span_of)
    return []


ENGINE_SECTIONS = ("sglang", "vllm")


def engine_launches(fields: dict, span_of) -> list[Launch]:
    """A framework Launch per engine section of one YAML mapping (`sglang:`/`vllm:` holding a
    mapping): its scalar settings, keyed as the engine's Python arguments (`-` read as `_`);
    null and `${...}` interpolations are left out or unknown."""
    import yaml

    out = []
    for tool in ENGINE_SECTIONS:
        section = fields.get(tool)
        if not isinstance(section, yaml.MappingNode):
            continue
        launch = Launch(tool, "framework")
        for key, node in section.value:
            if not isinstance(key, yaml.ScalarNode) or _scalar(node) is None or node.tag.endswith(":null"):
                continue
            flag = _flag(node)
            launch.settings[key.value.replace("-", "_")] = _setting(node, flag if flag is not None else node.value,
                                                                      key.value, span_of)
        if launch.settings:
            out.append(launch)
    return out


def _setting(node, value, key, span_of) -> Setting:
    return Setting(shell_value(value), span_of(node), key)


def _plain(fields: dict, key: str, span_of) -> list[Launch]:
    """TRL/HF-style (`attn_implementation`) and ms-swift (`attn_impl`) configs."""
    name = _text(fields[key])
    if name is None:
        return []
    if key == "attn_impl" and name == "flash_attn":
        name = "flash_attention_2"
    launch = Launch("transformers", "config")
    launch.settings["attn_implementation"] = _setting(fields[key], name, key, span_of)
    no_autocast = _flag(fields.get("bf16")) is False and _flag(fields.get("fp16")) is False
    for dkey in ("torch_dtype", "dtype"):
        dtype = _text(fields.get(dkey))
        if dtype is not None:
            shown = dtype if no_autocast or dtype not in ("float32", "float") else UNKNOWN
            launch.settings["torch_dtype"] = _setting(fields[dkey], shown, dkey, span_of)
    return [launch]


def _axolotl(fields: dict, span_of) -> list[Launch]:
    key = "attn_implementation" if "attn_implementation" in fields else next(
        (flag for flag, _ in AXOLOTL_LEGACY if _flag(fields.get(flag))), None)
    if key is None:
        return []
    name = _text(fields[key]) if key == "attn_implementation" else dict(AXOLOTL_LEGACY)[key]
    if name is None:
        return []
    passed = name in AXOLOTL_TO_TRANSFORMERS or "/" in name
    launch = Launch("transformers", "config")
    launch.settings["attn_implementation"] = _setting(fields[key], name if passed else UNKNOWN, key, span_of)
    half = any(_flag(fields.get(k)) for k in ("bfloat16", "fp16", "float16", "load_in_8bit"))
    if _flag(fields.get("bf16")) is False and not half:  # resolve_dtype: nothing asks for half precision
        launch.settings["torch_dtype"] = _setting(fields["bf16"], "float32", "bf16", span_of)
    return [launch]


def _llamafactory(fields: dict, span_of) -> list[Launch]:
    value = _text(fields["flash_attn"])
    if value not in LLAMAFACTORY:
        return []
    name = LLAMAFACTORY[value]
    launch = Launch("transformers", "config")
    launch.settings["attn_implementation"] = _setting(fields["flash_attn"], name if name else UNKNOWN,
                                                      "flash_attn", span_of)
    return [launch]


__all__ = ["ENGINE_SECTIONS", "MARKERS", "PREFILTER", "config_launches", "engine_launches"]
