"""`import flash_attn.cute` of flash-attn-4 4.0.0b15 under nvidia-cutlass-dsl 4.6.0: "module
'cutlass.cute.core' has no attribute 'ThrMma'" (flash_attn/cute/utils.py line 279), on the CPU.

Environments and versions: verification/cases/fa4/_thrmma.py. Reproduce: the import in the record's
pair. Fix 1: `python -m pip install -U --pre flash-attn-4` in the failing environment, then the import
runs; and the first release the fix names, 4.0.0b16, imports under nvidia-cutlass-dsl 4.6.0 exactly.
Fix 2 (FA4 betas): the fix's pins run in the failing environment, then the import runs; the notes say
what the DSL pin alone does there (pip keeps quack-kernels 0.6.3, which asks for
nvidia-cutlass-dsl~=4.6.0). The fix's other half, flash-attn 2.8.3's copy with nvidia-cutlass-dsl 4.1.0
(Python 3.12 wheels only), is not run."""

from verification.cases.fa4 import _thrmma as t

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800

reproduce = t.reproduce


def fix_1(ctx):
    t.fix_upgraded(ctx)
    ctx.call(t.runs_clean, t.first_fixed_release(ctx))


fix_2 = t.fix_pinned_dsl
