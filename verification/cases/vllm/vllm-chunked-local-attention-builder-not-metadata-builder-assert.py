"""vLLM 0.11.1+ asserts that the platform backend's metadata builder derives from AttentionMetadataBuilder
before it derives the chunked-local-attention builder (Llama 4); an out-of-tree plugin whose builder is a
plain class stops there.

Run with the releases' own code on the CPU (verification/cases/vllm/_vllm_releases.py): vLLM's
create_chunked_local_attention_backend, given a backend whose get_builder_cls() returns vllm-gaudi's real
HPUPagedAttentionMetadataBuilder, loaded from vllm_gaudi/attention/ops/hpu_paged_attn.py of the
vllm-project/vllm-gaudi commit named (a local clone, verification/cases/_downstream.py). That file imports
the Gaudi extension (`vllm_gaudi.extension`: cache_ops, ops), which needs Habana's software stack; it is
an errkb stand-in module (never called: defining the classes does not touch it). The backend class is
the step's own, as a plugin's HPUAttentionBackend.get_builder_cls would return the builder.

reproduce: vLLM 0.11.1 with the builder of d621578a (the parent of the fix, 54fab50c): the bare assert.
fix 1: vLLM 0.11.1 with the builder of vllm-gaudi's v0.11.2 tag (and, noted, of 54fab50c) passes.
fix 2: the fix's plugin code (a builder subclassing AttentionMetadataBuilder from vllm.v1.attention.backend)
on vLLM 0.14.1 and 0.16.0 passes; the note says where each release exports the class.
control: the unfixed plugin on vLLM 0.11.0, which builds the subclass without the check."""

from verification.cases import _downstream
from verification.cases.vllm import _vllm_releases as rel

BACKEND = "vllm"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
GAUDI = "vllm-project/vllm-gaudi"
GAUDI_FILE = "vllm_gaudi/attention/ops/hpu_paged_attn.py"

CODE = r'''
import importlib, importlib.util, sys, types
class StandIn(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError(f"errkb stand-in {self.__name__}.{name} reached")
for name in ("vllm_gaudi", "vllm_gaudi.extension", "vllm_gaudi.extension.cache_ops", "vllm_gaudi.extension.ops"):
    sys.modules[name] = StandIn(name)
sys.modules["vllm_gaudi.extension"].__dict__.update(cache_ops=sys.modules["vllm_gaudi.extension.cache_ops"],
                                                     ops=sys.modules["vllm_gaudi.extension.ops"])
for where in ("vllm.model_executor.layers.attention.chunked_local_attention", "vllm.attention.layers.chunked_local_attention"):
    try:
        cla = importlib.import_module(where)
        break
    except ModuleNotFoundError:
        continue
exports = {}
for where in ("vllm.v1.attention.backends.utils", "vllm.v1.attention.backend"):
    try:
        exports[where] = hasattr(importlib.import_module(where), "AttentionMetadataBuilder")
    except ModuleNotFoundError:
        exports[where] = None
if GAUDI_FILE:
    spec = importlib.util.spec_from_file_location("hpu_paged_attn", GAUDI_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    Builder = module.HPUPagedAttentionMetadataBuilder
else:  # the record's fix 2, as written
    from vllm.v1.attention.backend import AttentionMetadataBuilder  # 0.14.0+

    class MyMetadataBuilder(AttentionMetadataBuilder):
        ...
    Builder = MyMetadataBuilder

class PluginAttentionBackend:
    @staticmethod
    def get_builder_cls():
        return Builder

info = {"module": cla.__name__, "exports": exports, "bases": [c.__qualname__ for c in Builder.__mro__[1:]]}
try:
    made = cla.create_chunked_local_attention_backend(PluginAttentionBackend, 8192, 16)
    chunked = made.get_builder_cls()
    info.update(raised=None, made=made.__name__, derives=issubclass(chunked, Builder))
except BaseException as exc:
    info.update(raised=errkb_raised(exc))
errkb_report(info)
'''


def _gaudi_file(ctx, commit: str) -> str:
    ctx.note("vllm_gaudi.extension (cache_ops, ops: Habana's runtime) is an errkb stand-in module in the child; "
             "defining the builder classes does not reach it")
    return str(_downstream.tree(ctx, GAUDI, commit, [GAUDI_FILE]) / GAUDI_FILE)


def _run(ctx, version: str, gaudi: str | None) -> dict:
    path = _gaudi_file(ctx, gaudi) if gaudi else ""
    got = rel.run(ctx, version, CODE.replace("GAUDI_FILE", "ERRKB_GAUDI_FILE").replace(
        "import importlib,", f"ERRKB_GAUDI_FILE = {path!r}\nimport importlib,", 1))
    ctx.note(f"vllm {version}, builder {'of vllm-gaudi ' + gaudi if gaudi else 'of fix 2'} (bases {got['bases']}): "
             f"{got['module']}; AttentionMetadataBuilder exported by {got['exports']}; "
             + (f"raised {got['raised']['class']} at {got['raised']['file'].split('/vllm/', 1)[-1]}:{got['raised']['line']}: "
                f"{got['raised']['source']}" if got["raised"] else f"made {got['made']}"))
    return got


def _passes(ctx, got: dict) -> None:
    rel.passes(ctx, got, "derives", "the chunked-local builder does not derive from the plugin's builder")


def reproduce(ctx):
    got = _run(ctx, "0.11.1", "d621578a")
    ctx.expect_error(rel.raise_statement, got["raised"])


def fix_1(ctx):
    _passes(ctx, _run(ctx, "0.11.1", "v0.11.2"))
    _passes(ctx, _run(ctx, "0.11.1", "54fab50c"))


def fix_2(ctx):
    for version in ("0.14.1", "0.16.0"):
        _passes(ctx, _run(ctx, version, None))


def control(ctx):
    _passes(ctx, _run(ctx, "0.11.0", "d621578a"))
