"""trust_remote_code loading stops before the model's code runs: 'This modeling file requires the
following packages that were not found in your environment: flash_attn. Run `pip install flash_attn`'.

A local remote-code checkpoint made in code (no Hub): config.json with an auto_map, a
configuration file, and a modeling file (a Llama subclass) that imports flash_attn at its top,
loaded with AutoModelForCausalLM.from_pretrained(folder, trust_remote_code=True) on a CPU without
flash-attn. Fix 2 (the record's get_imports patch) loads a copy whose import sits under an
`if is_flash_attn_2_available():` guard, as remote code that has an SDPA path writes it, with
attn_implementation="sdpa"; its logits must match the same weights under eager attention.
Fix 1 (install flash-attn) needs a CUDA build and fix 3 transformers 5.x: not run."""

import json
import os
import tempfile

from verification.cases.transformers._tf import refute, tiny_config

BACKEND = "transformers"
REQUIRES = {"packages": ["transformers", "torch"]}
TIMEOUT = 300

CONFIG_PY = '''from transformers import LlamaConfig


class ErrkbRemoteConfig(LlamaConfig):
    model_type = "errkb_remote"
'''
MODELING_PY = '''{guard}from flash_attn import flash_attn_func  # noqa: F401
from transformers import LlamaForCausalLM

from .configuration_errkb_remote import ErrkbRemoteConfig


class ErrkbRemoteForCausalLM(LlamaForCausalLM):
    config_class = ErrkbRemoteConfig
'''
GUARD = "from transformers.utils import is_flash_attn_2_available\n\nif is_flash_attn_2_available():\n    "
_folders: dict[bool, str] = {}


def checkpoint(guarded: bool) -> str:
    """A tiny remote-code checkpoint folder (saved once per process for each kind)."""
    if guarded not in _folders:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from transformers import LlamaForCausalLM

        folder = tempfile.mkdtemp(prefix="errkb-remote-")
        LlamaForCausalLM(tiny_config()).save_pretrained(folder)
        with open(os.path.join(folder, "config.json")) as f:
            cfg = json.load(f)
        cfg.update(model_type="errkb_remote", architectures=["ErrkbRemoteForCausalLM"],
                   auto_map={"AutoConfig": "configuration_errkb_remote.ErrkbRemoteConfig",
                             "AutoModelForCausalLM": "modeling_errkb_remote.ErrkbRemoteForCausalLM"})
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(cfg, f)
        with open(os.path.join(folder, "configuration_errkb_remote.py"), "w") as f:
            f.write(CONFIG_PY)
        with open(os.path.join(folder, "modeling_errkb_remote.py"), "w") as f:
            f.write(MODELING_PY.format(guard=GUARD if guarded else ""))
        _folders[guarded] = folder
    return _folders[guarded]


def load(folder, **kwargs):
    def run():
        from transformers import AutoModelForCausalLM

        return AutoModelForCausalLM.from_pretrained(folder, trust_remote_code=True, **kwargs)
    return run


def reproduce(ctx):
    from verification.cases.transformers._tf import flash_attn_installed

    if flash_attn_installed():
        ctx.skip("flash_attn is installed here")
    ctx.expect_error(load(checkpoint(guarded=False)))


def fix_1(ctx):
    ctx.skip("installing flash-attn needs a CUDA build for this torch")


def fix_2(ctx):
    from unittest.mock import patch

    from transformers.dynamic_module_utils import get_imports

    def no_flash_attn(filename):
        return [i for i in get_imports(filename) if i != "flash_attn"]

    folder = checkpoint(guarded=True)
    with patch("transformers.dynamic_module_utils.get_imports", no_flash_attn):
        model = ctx.call(load(folder, attn_implementation="sdpa")).eval()
    impl = model.config._attn_implementation
    if impl != "sdpa":
        refute(ctx, f"the remote model loaded with {impl!r}, not sdpa", impl=impl)
    t = ctx.torch
    with patch("transformers.dynamic_module_utils.get_imports", no_flash_attn):
        eager = load(folder, attn_implementation="eager")().eval()
    ids = t.tensor([[1, 2, 3, 4, 5, 6]])
    with t.no_grad():
        ctx.close(ctx.call(model, ids).logits, eager(ids).logits, atol=1e-4, rtol=1e-4, what="SDPA logits vs eager")


def fix_3(ctx):
    ctx.skip("needs transformers 5.x (its import check skips guarded imports); not in this environment")
