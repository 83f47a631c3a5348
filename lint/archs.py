"""The GPU archs lint rules know, in a module of their own so the CLI can list them without
importing libcst."""

ALL_ARCHS = ("sm80", "sm86", "sm89", "sm90", "sm100", "sm103", "sm110", "sm120", "sm121")
DEFAULT_ARCHS = ("sm80", "sm86", "sm89", "sm90", "sm100", "sm120")
