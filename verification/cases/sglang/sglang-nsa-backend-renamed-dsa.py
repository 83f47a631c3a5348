"""SGLang's --attention-backend nsa still works but warns that it is a deprecated alias of dsa."""

import warnings

from errkb.verify.case import Refuted
from verification.cases.sglang._server import create, reaches, runner
from verification.cases.sglang._launch import first

BACKEND = "sglang-server"
REQUIRES = {"packages": ["sglang.srt.layers.attention.attention_registry"]}
DSA = "sglang.srt.layers.attention.dsa_backend"


def reproduce(ctx):
    # The warning comes first; the creator then builds the DSA backend, which stops on the
    # stand-in runner (kept in the result as then_raised).
    ctx.expect_warning(create, "nsa", runner(mla=True))


def fix_1(ctx):
    # --attention-backend dsa builds the same backend without the warning.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reaches(ctx, DSA, create, "dsa", runner(mla=True))
    if any(issubclass(w.category, DeprecationWarning) and "nsa" in str(w.message) for w in caught):
        raise Refuted("'dsa' still warns about the nsa alias")


def entry_sglang_server(ctx):
    # --attention-backend nsa on a DeepSeek-V3-shaped MLA model: the warning the user sees, or
    # whatever the launcher says about the alias first.
    first(ctx, ["--attention-backend", "nsa"], model="deepseek-v3",
          then=lambda args, runner: create("nsa", runner))
