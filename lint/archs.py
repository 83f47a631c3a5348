"""The GPU archs lint rules know, in a module of their own so the CLI can list them without
importing libcst. Volta and Turing (sm70, sm75) are known but not targeted by default: FlashAttention
2/3 refuse them, so a project that runs on T4/V100 says so with --gpu-arch."""

ALL_ARCHS = ("sm70", "sm75", "sm80", "sm86", "sm89", "sm90", "sm100", "sm103", "sm110", "sm120", "sm121")
DEFAULT_ARCHS = ("sm80", "sm86", "sm89", "sm90", "sm100", "sm120")
