"""Stand-ins for compiled extension modules that cannot load beside this machine's torch.

SGLang's and vLLM's Python code imports its compiled kernels (sgl_kernel, vllm._C ...) at module
level, and those wheels are built for another torch, so the import fails before any of the
pure-Python checks a record is about can run. A stand-in module takes the compiled module's
place in sys.modules: importing it and any name from it works, but *calling* anything from it
raises `StandInReached`. A step that reaches compiled code therefore ends as an `error` (it
showed nothing), never as `confirmed`. Every stand-in a step relied on is written into its notes.
"""

from __future__ import annotations

import sys
import types
from contextlib import contextmanager


class StandInReached(RuntimeError):
    """Case code called into a compiled module that a stand-in replaces: the step showed nothing."""


class _StandInCallable:
    def __init__(self, qualname: str):
        self._qualname = qualname

    def __call__(self, *args, **kwargs):
        raise StandInReached(f"{self._qualname} is a stand-in for a compiled function and was called")

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _StandInCallable(f"{self._qualname}.{name}")

    def __repr__(self) -> str:
        return f"<errkb stand-in {self._qualname}>"


class StandInModule(types.ModuleType):
    """A module whose every public attribute is a stand-in callable (or stand-in submodule)."""

    def __init__(self, name: str):
        super().__init__(name, f"errkb stand-in for the compiled module {name}")
        self.__path__ = []  # a package, so `from name.sub import x` finds the stand-in submodule
        self.__errkb_standin__ = True

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _StandInCallable(f"{self.__name__}.{name}")


def reached(exc: BaseException | None) -> bool:
    """Whether the exception, or one it was raised from or during, is a stand-in being called."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, StandInReached):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def is_standin(module) -> bool:
    return bool(getattr(module, "__errkb_standin__", False))


def install(*names: str) -> list[str]:
    """Put a stand-in in sys.modules for each dotted name (and its parents) not already loaded.
    Returns the names that were stood in, for the step's notes."""
    added = []
    for name in names:
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            dotted = ".".join(parts[:i])
            if dotted in sys.modules:
                continue
            module = StandInModule(dotted)
            sys.modules[dotted] = module
            if i > 1:
                setattr(sys.modules[".".join(parts[: i - 1])], parts[i - 1], module)
            added.append(dotted)
    return added


@contextmanager
def standing_in(ctx, *names: str):
    """install(*names) for the duration of a step, noting which modules were stood in."""
    added = install(*names)
    if added:
        ctx.note("compiled modules replaced by errkb stand-ins (calling them raises): " + ", ".join(added))
    try:
        yield added
    finally:
        for name in added:
            sys.modules.pop(name, None)
