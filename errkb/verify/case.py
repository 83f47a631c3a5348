"""What case code uses: the step context and its checks.

A step is `def reproduce(ctx)`, `def fix_1(ctx)`, `def control(ctx)`. It passes by returning;
it is `refuted` when a check fails (`Refuted`), and an `error` when anything else goes wrong
(a broken case, a missing input): only a *claimed* call's failures refute the record.

    def reproduce(ctx):
        q, k, v = ctx.randn(...), ...
        ctx.expect_error(flash_attn_func, q, k, v, num_splits=2)   # the record's class + template

    def fix_1(ctx):
        out = ctx.call(flash_attn_func, q, k, v, num_splits=1)     # must run, and must not
        ctx.close(out, reference, atol=2e-2)                      # emit the record's message
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import warnings
from contextlib import contextmanager

from errkb import templates
from errkb.verify import standin

CUDA_POISON = re.compile(r"CUDA error|illegal memory access|device-side assert|CUBLAS_STATUS|cudaError|"
                         r"unspecified launch failure|AcceleratorError")


class Refuted(AssertionError):
    """The claim does not hold: the step observed something else."""


class Skip(Exception):
    """The step cannot run here (a need only known at run time); the reason is recorded."""


def _class_names(exc: BaseException) -> list[str]:
    return [c.__name__ for c in type(exc).__mro__]


def _qualname(obj) -> str:
    cls = obj if isinstance(obj, type) else type(obj)
    mod = cls.__module__
    return cls.__qualname__ if mod in ("builtins", "__main__") else f"{mod}.{cls.__qualname__}"


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def match_message(template: str, message: str) -> str | None:
    """'full' when the message is an instance of the template, 'search' when it contains one."""
    if templates.fullmatch(template, message) is not None:
        return "full"
    if templates.search_regex(template).search(message):
        return "search"
    return None


def attempt(fn, *args, **kwargs):
    """(result, None) when the call returns, (None, the exception) when it raises: the checks
    look at what happened instead of letting it propagate."""
    try:
        return fn(*args, **kwargs), None
    except Skip:
        raise  # the step cannot run here: that is not what the call did
    except Exception as exc:  # noqa: BLE001 - handed to the caller to judge
        return None, exc


class UsageExit(Exception):
    """An argparse usage error (SystemExit 2) turned into an exception whose message is the line
    argparse printed after `error: `, so an entry point's command-line refusal can be looked at
    like any other error (the class users see is reported as SystemExit)."""


def _argparse_exit(exc: SystemExit, stderr: str) -> UsageExit:
    lines = [ln for ln in stderr.splitlines() if ": error: " in ln]
    text = lines[-1].split(": error: ", 1)[1] if lines else f"exit status {exc.code}"
    return UsageExit(text)


def argparse_call(fn, *args, **kwargs):
    """Call fn, an argument parser or a function that runs one (a server's `prepare_server_args`),
    for a claim step: an argparse usage error (SystemExit with a non-zero status) is raised as a
    UsageExit whose message is the line argparse printed after `error: `, with `prog` (the
    program name it printed before) and `code` (the exit status), so `expect_error` can judge it
    like any other error (the class it reports is SystemExit); --help's exit 0 returns what was
    printed on stdout."""
    err, out = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            return fn(*args, **kwargs)
    except SystemExit as exc:
        if exc.code in (0, None):
            return out.getvalue()
        usage = _argparse_exit(exc, err.getvalue())
        lines = [ln for ln in err.getvalue().splitlines() if ": error: " in ln]
        usage.prog = lines[-1].split(": error: ", 1)[0] if lines else None
        usage.code = exc.code
        raise usage from None


class HarnessFailure(RuntimeError):
    """An entry-point step stopped on this machine's setup, not on anything the entry point
    decided (harness_failure): an `error` with the reason, never a verdict."""


# What a module executed a second time in one process raises when it registers again what its
# first, failed execution registered (torch's opaque types, custom ops, a library's registries).
# A user's process imports each module once; only a harness that retries an import sees this.
REREGISTERED = re.compile(r"already registered|registered (more than once|twice|multiple times)|"
                          r"Duplicate registration", re.IGNORECASE)


def _import_site(exc: BaseException) -> str | None:
    """The file whose module-level code was running when exc was raised (the innermost such
    frame), i.e. exc came out of an import; None when it was raised by calls alone."""
    site, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "<module>":
            site = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return site


def harness_failure(exc: BaseException) -> tuple[str, str] | None:
    """('skipped' or 'error', the reason) when the exception that stopped an entry point shows this
    machine's setup failing rather than the entry point deciding, else None:

    - a module the launch imports is not installed here (ModuleNotFoundError from the import
      system): skipped;
    - the launch called compiled code that an errkb stand-in replaces: error;
    - any other failure of the import system (`cannot import name`, a shared library that does
      not load: an ImportError the import machinery made, which names the module): error;
    - something registered twice in one process (REREGISTERED), which only an import retried
      after a failed one does: error;
    - anything else raised by a module's top-level code while it was being imported: the launch
      never got to decide anything: error.

    An ImportError raised by a library's own code (name unset: transformers' "... doesn't seem to
    be installed") is what users see, so it is none of these. Checked only after the record's
    message, which is `reached` wherever it comes from."""
    text = f"{_qualname(exc)}: {str(exc)[:300]}"
    if standin.reached(exc):
        return "error", f"the launch called compiled code that an errkb stand-in replaces ({text})"
    if isinstance(exc, ModuleNotFoundError) and exc.name and str(exc).startswith("No module named"):
        return "skipped", f"the entry point needs module {exc.name!r}, not importable here"
    if isinstance(exc, ImportError) and exc.name is not None:
        return "error", f"an import on the entry point's path fails on this machine ({text})"
    for e in _chain(exc):
        if REREGISTERED.search(str(e)):
            return "error", ("something was registered twice in one process, which only a module imported "
                             f"again after a failed import does: a harness artifact, not what users see ({text})")
    site = _import_site(exc)
    if site is not None:
        return "error", f"raised while importing {site}, before the entry point decided anything ({text})"
    return None


def error_class_name(error_class: str) -> str:
    """The class name a record's `error_class` names: 'torch.OutOfMemoryError' -> 'OutOfMemoryError',
    'SystemExit (argparse usage error, exit status 2)' -> 'SystemExit'."""
    m = re.match(r"[\w.]+", error_class.strip())
    return (m.group(0) if m else error_class).rsplit(".", 1)[-1]


def run_logged(logger_name: str, fn, *args, **kwargs):
    """Call fn, keeping every record `logger_name` logs meanwhile (any level).
    Returns (records, result, exception raised or None)."""

    class Keep(logging.Handler):
        def __init__(self):
            super().__init__(logging.DEBUG)
            self.records: list[logging.LogRecord] = []

        def emit(self, record):
            self.records.append(record)

    logger = logging.getLogger(logger_name)
    keep, level = Keep(), logger.level
    logger.addHandler(keep)
    logger.setLevel(logging.DEBUG)
    try:
        result, raised = attempt(fn, *args, **kwargs)
    finally:
        logger.removeHandler(keep)
        logger.setLevel(level)
    return keep.records, result, raised


class Context:
    """Handed to each step; collects what the step observed for the result line."""

    def __init__(self, record: dict, step: str, device: str = "cpu"):
        self.record = record
        self.step = step
        self.device = device
        self.observed: dict | None = None
        self.max_error: float | None = None
        self.tolerance: dict | None = None
        self.warnings: list[dict] = []
        self.notes: list[str] = []

    # ------------------------------------------------------------ helpers for case code
    @property
    def torch(self):
        import torch

        return torch

    def seed(self, n: int = 0) -> None:
        self.torch.manual_seed(n)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def skip(self, reason: str):
        raise Skip(reason)

    @property
    def cc(self) -> tuple[int, int] | None:
        t = self.torch
        return tuple(t.cuda.get_device_capability()) if t.cuda.is_available() else None

    # ------------------------------------------------------------ checks
    def _matches_record(self, exc_or_warning, cls_name: str, message: str) -> str | None:
        want = error_class_name(self.record["error_class"])
        if isinstance(exc_or_warning, UsageExit):
            cls_name = ["SystemExit"]
        if want not in cls_name:
            return None
        return match_message(self.record["template"], message)

    @contextmanager
    def _capture(self):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield caught
        for w in caught:
            self.warnings.append({"class": w.category.__name__, "message": str(w.message)[:2000]})

    def _record_warning_in(self, caught) -> dict | None:
        for w in caught:
            names = [c.__name__ for c in w.category.__mro__]
            how = self._matches_record(w, names, str(w.message))
            if how:
                return {"class": w.category.__name__, "message": str(w.message)[:4000], "match": how}
        return None

    def _observe_unexpected(self, exc: BaseException, **extra) -> None:
        """Keep an exception that goes against the claim; a CUDA fault propagates instead, since
        the worker's CUDA context is unusable and the runner must replace the worker."""
        self.observed = {"class": _qualname(exc), "message": str(exc)[:4000], **extra}
        if CUDA_POISON.search(f"{_qualname(exc)} {exc}"):
            raise exc
        if standin.reached(exc):
            raise exc  # it ran into a stand-in, not into the claim: an error, not a refutation

    def expect_logged(self, logger_name: str, fn, *args, level: int = logging.WARNING, **kwargs):
        """For records whose message is a log line (logging, not warnings): the call must log a
        line of `level` on `logger_name` matching the record's template. It may raise afterwards
        (kept in `observed`). Returns (the logged text, the call's result)."""
        records, result, raised = run_logged(logger_name, fn, *args, **kwargs)
        name = f"logging.{logging.getLevelName(level)}"
        for rec in records:
            text = rec.getMessage()
            how = rec.levelno == level and match_message(self.record["template"], text)
            if how:
                self.observed = {"class": name, "message": text[:4000], "match": how}
                if raised is not None:
                    self.observed["then_raised"] = {"class": _qualname(raised), "message": str(raised)[:2000]}
                return text, result
        self.observed = {"class": None, "message": None, "logged": [r.getMessage()[:500] for r in records][:10]}
        if raised is not None:
            self.observed["raised"] = {"class": _qualname(raised), "message": str(raised)[:2000]}
        raise Refuted(f"no matching {name} among {len(records)} log records")

    def not_logged(self, logger_name: str, fn, *args, **kwargs):
        """A claimed-good call: it must return, and log nothing matching the record's template."""
        records, result, raised = run_logged(logger_name, fn, *args, **kwargs)
        for rec in records:
            if match_message(self.record["template"], rec.getMessage()):
                self.observed = {"class": f"logging.{rec.levelname}", "message": rec.getMessage()[:4000]}
                raise Refuted("the record's message is still logged")
        if raised is not None:
            self._observe_unexpected(raised)
            raise Refuted(f"the call raised {_qualname(raised)}") from raised
        return result

    def expect_error(self, fn, *args, **kwargs) -> BaseException:
        """The call must raise the record's exception class with a message matching its template."""
        with self._capture() as caught:
            _, raised = attempt(fn, *args, **kwargs)
        if raised is None:
            hit = self._record_warning_in(caught)
            if hit and self.record.get("kind") == "warning":
                self.observed = hit
                return None
            self.observed = {"class": None, "message": None}
            raise Refuted("the call returned without raising")
        for i, exc in enumerate(_chain(raised)):
            how = self._matches_record(exc, _class_names(exc), str(exc))
            if how:
                cls = "SystemExit" if isinstance(exc, UsageExit) else _qualname(exc)
                self.observed = {"class": cls, "message": str(exc)[:4000], "match": how}
                if i:
                    self.observed["wrapped_in"] = _qualname(raised)
                return exc
        self._observe_unexpected(raised, match=None)
        raise Refuted(f"raised {_qualname(raised)} that does not match the record")

    def expect_warning(self, fn, *args, **kwargs):
        """The call must emit a warning of the record's class matching its template; returns the result."""
        with self._capture() as caught:
            result, raised = attempt(fn, *args, **kwargs)
        hit = self._record_warning_in(caught)
        if hit:
            self.observed = hit
            if raised is not None:
                self.observed["then_raised"] = {"class": _qualname(raised), "message": str(raised)[:2000]}
            return result
        if raised is not None:
            self._observe_unexpected(raised, match=None)
            raise Refuted(f"raised {_qualname(raised)} without the record's warning")
        self.observed = {"class": None, "message": None}
        raise Refuted(f"no matching warning among {len(caught)} emitted")

    def call(self, fn, *args, **kwargs):
        """A claimed-good call (a fix or the control): it must run, and emit none of the record's message."""
        with self._capture() as caught:
            result, raised = attempt(fn, *args, **kwargs)
        if raised is not None:
            self._observe_unexpected(raised)
            raise Refuted(f"the call raised {_qualname(raised)}") from raised
        hit = self._record_warning_in(caught)
        if hit:
            self.observed = hit
            raise Refuted("the call still emits the record's message")
        return result

    def expect_first(self, fn, *args, loggers: tuple[str, ...] = (), **kwargs):
        """An entry-point step (`entry_<kind>`): fn goes through the user's entry point (a server's
        launch arguments, an engine's constructor, a model's loading) with the documented arguments,
        and the step records what the user sees first. `observed["entry"]` says which:

        - `reached`: the record's message is what stops the call (an error record: the exception
          raised, or one it wraps), or is emitted before anything stops it (a warning record: a
          warning, or a line logged on one of `loggers` at any level);
        - `preempted`: something else stopped the call first (observed: that exception);
        - `not-raised`: the call went through without the record's message.

        `reached` returns (the matched exception or None, the call's result); the other two refute
        the step. An argparse refusal (SystemExit) is read from what argparse printed. What stops
        the call because of this machine's setup rather than the entry point (harness_failure) is
        no verdict: the step is skipped or ends in error, with the reason."""
        keep: list[logging.LogRecord] = []
        prefixes = tuple(loggers)
        original = logging.Logger.handle

        def handle(logger, record):
            # Every record a logger under `loggers` handles, whatever handlers the launch installs
            # meanwhile (vLLM and SGLang reconfigure logging while they start).
            if record.name in prefixes or record.name.startswith(tuple(p + "." for p in prefixes)):
                keep.append(record)
            return original(logger, record)

        saved = [(logging.getLogger(n), logging.getLogger(n).level) for n in loggers]
        for logger, _ in saved:
            logger.setLevel(logging.DEBUG)
        stderr = io.StringIO()
        logging.Logger.handle = handle
        try:
            with self._capture() as caught, contextlib.redirect_stderr(stderr):
                try:
                    result, raised = attempt(fn, *args, **kwargs)
                except SystemExit as exc:
                    result, raised = None, _argparse_exit(exc, stderr.getvalue())
        finally:
            logging.Logger.handle = original
            for logger, level in saved:
                logger.setLevel(level)
        if stderr.getvalue():
            self.note("stderr: " + stderr.getvalue()[-1500:])
        if raised is not None:
            for i, exc in enumerate(_chain(raised)):
                how = self._matches_record(exc, _class_names(exc), str(exc))
                if how:
                    cls = "SystemExit" if isinstance(exc, UsageExit) else _qualname(exc)
                    self.observed = {"entry": "reached", "class": cls, "message": str(exc)[:4000], "match": how}
                    if i:
                        self.observed["wrapped_in"] = _qualname(raised)
                    return exc, result
        if self.record.get("kind") == "warning":
            hit = self._record_warning_in(caught)
            for rec in keep if hit is None else ():
                how = match_message(self.record["template"], rec.getMessage())
                if how:
                    hit = {"class": f"logging.{rec.levelname}", "message": rec.getMessage()[:4000], "match": how}
                    break
            if hit:
                self.observed = {"entry": "reached", **hit}
                if raised is not None:
                    self.observed["then_raised"] = {"class": _qualname(raised), "message": str(raised)[:2000]}
                return None, result
        if raised is None:
            self.observed = {"entry": "not-raised", "class": None, "message": None}
            raise Refuted("the entry point went through without the record's message")
        setup = harness_failure(raised)
        if setup is not None:
            status, why = setup
            self.observed = {"entry": status, "class": _qualname(raised), "message": str(raised)[:4000]}
            if status == "skipped":
                self.skip(why)
            raise HarnessFailure(why) from raised
        cls = "SystemExit" if isinstance(raised, UsageExit) else _qualname(raised)
        self._observe_unexpected(raised, entry="preempted", match=None)
        self.observed["class"] = cls
        raise Refuted(f"preempted: {cls} came first")

    def close(self, out, ref, *, atol: float, rtol: float = 0.0, what: str = "output"):
        """out must match the fp32 reference within atol + rtol*|ref| everywhere (NaN fails)."""
        if not hasattr(out, "detach"):  # plain numbers or nested lists (no torch needed)
            return self._close_plain(out, ref, atol=atol, rtol=rtol, what=what)
        t = self.torch
        out = out.detach().float().cpu()
        ref = ref.detach().float().cpu()
        if out.shape != ref.shape:
            raise Refuted(f"{what}: shape {tuple(out.shape)} != reference {tuple(ref.shape)}")
        diff = (out - ref).abs()
        err = float(diff.max()) if diff.numel() else 0.0
        if t.isnan(diff).any():
            err = float("nan")
        if self.max_error is None or err != err or err > self.max_error:
            self.max_error = err
        self.tolerance = {"atol": atol, "rtol": rtol}
        bad = ~(diff <= atol + rtol * ref.abs())
        if bool(bad.any()):
            raise Refuted(f"{what}: max error {err:.3g} exceeds atol={atol} rtol={rtol}")
        return err

    def _close_plain(self, out, ref, *, atol, rtol, what):
        def flat(x):
            if isinstance(x, (list, tuple)):
                return [y for item in x for y in flat(item)]
            return [float(x)]

        a, b = flat(out), flat(ref)
        if len(a) != len(b):
            raise Refuted(f"{what}: {len(a)} values != reference {len(b)}")
        diffs = [abs(x - y) for x, y in zip(a, b)]
        err = max(diffs, default=0.0)
        if any(d != d for d in diffs):
            err = float("nan")
        if self.max_error is None or err != err or err > self.max_error:
            self.max_error = err
        self.tolerance = {"atol": atol, "rtol": rtol}
        if any(not (d <= atol + rtol * abs(y)) for d, y in zip(diffs, b)):
            raise Refuted(f"{what}: max error {err:.3g} exceeds atol={atol} rtol={rtol}")
        return err
