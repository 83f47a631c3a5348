"""A per-file time limit that works inside the running process: a one-shot SIGALRM timer whose
handler raises FileTimeout in the main thread, so the file is given up and the run goes on.

FileTimeout is a BaseException, so no `except Exception` in the analysis can swallow it. The
limit is checked whenever Python code runs: one call into libcst's native parser finishes
first (the parser is fed only files that CPython's own parser accepted under a bounded
recursion limit). Where there is no SIGALRM (Windows) or outside the main thread, no limit
applies.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager


class FileTimeout(BaseException):
    """The file's analysis ran past its time limit."""


def _on_alarm(signum, frame):
    raise FileTimeout


def can_limit() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float | None):
    """Raise FileTimeout in the body once `seconds` have passed (None or <= 0: no limit)."""
    if not seconds or seconds <= 0 or not can_limit():
        yield
        return
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
