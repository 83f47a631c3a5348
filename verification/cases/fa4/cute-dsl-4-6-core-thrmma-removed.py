"""CuTe DSL code that still writes `cute.core.ThrMma`, under nvidia-cutlass-dsl 4.6.0: "module
'cutlass.cute.core' has no attribute 'ThrMma'" when its module is imported, on the CPU.

The package run is FlashAttention-4 (flash-attn-4 4.0.0b15, the record's example caller); environments
and versions: verification/cases/fa4/_thrmma.py (shared with fa4-cute-core-thrmma-cutlass-dsl-4-6, whose
runs these steps reuse within one worker). Reproduce: `import flash_attn.cute`. Fix 1: the fix's
`python -m pip install -U --pre flash-attn-4` in the failing environment, then the import runs. Fix 2:
the fix's DSL pin in the failing environment, with quack-kernels held below 0.6 (the notes say what the
DSL pin alone does: quack-kernels 0.6.3 asks for nvidia-cutlass-dsl~=4.6.0), then the import runs.
Other callers (vLLM's fmha_sm100) are not run."""

from verification.cases.fa4 import _thrmma as t

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800

reproduce = t.reproduce


fix_1 = t.fix_upgraded
fix_2 = t.fix_pinned_dsl
