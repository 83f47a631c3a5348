"""xFormers' start-up notice "A matching Triton is not available, some optimizations will not be
enabled", on the CPU, with PyPI's wheels in uv environments (Python 3.11, uv 0.9.0):

- xformers 0.0.23.post1 with the torch it pins, 2.1.2 (Triton 2.1.0): the "Error caught was" shape;
- xformers 0.0.33.post2 with the torch it pins, 2.9.1 (Triton 3.5.1): the 0.0.24+ traceback shape.

"No triton" is made as on Linux: the environment as uv installs it (torch's Linux wheel brings its
triton), then `uv pip uninstall triton`. Every import runs in a child process of that environment.
Stand-in, said in every step's notes: xFormers asks torch whether a CUDA device is there (and from
0.0.24 its compute capability) before it tries Triton, and this machine has none, so the child
first makes torch.cuda answer as one device of capability 9.0 would (is_available, device_count,
current_device, get_device_capability, get_device_name, get_device_properties); nothing runs on
it. The control runs without that answer. The child keeps each log record (logger, level, message,
traceback) and prints it as `ERRKB-LOG <json>`, next to the text logging's default handler writes,
which is what users see; the records are logged again here under their own logger and level, so
`expect_logged` judges the `xformers` logger's own line.
"""

from __future__ import annotations

import json
import logging
import re

from errkb import templates
from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1500
LOGGER = "xformers"
MESSAGE = "A matching Triton is not available, some optimizations will not be enabled"

# (label, requirements uv installs); the torch and triton come from xformers' own pin.
OLD = ("0.0.23.post1", ("xformers==0.0.23.post1", "numpy<2"))
NEW = ("0.0.33.post2", ("xformers==0.0.33.post2",))

PRETEND = """
import torch
from types import SimpleNamespace
_cap = ({major}, {minor})
_props = SimpleNamespace(name="errkb pretend CUDA (no GPU)", major=_cap[0], minor=_cap[1],
                         total_memory=80 * 2**30, multi_processor_count=132)
for _a, _f in {{"is_available": lambda: True, "device_count": lambda: 1, "current_device": lambda: 0,
               "get_device_capability": lambda device=None: _cap,
               "get_device_name": lambda device=None: _props.name,
               "get_device_properties": lambda device=None: _props}}.items():
    setattr(torch.cuda, _a, _f)
"""

KEEP_LOGS = """
import json, logging, sys
class _Keep(logging.Handler):
    def emit(self, r):
        exc = logging.Formatter().formatException(r.exc_info) if r.exc_info else None
        sys.stdout.write("ERRKB-LOG " + json.dumps({"name": r.name, "level": r.levelno, "msg": r.getMessage(), "exc": exc}) + "\\n")
        sys.stdout.flush()
_shown = logging.StreamHandler(sys.stderr)   # what logging's last-resort handler would print
_shown.setLevel(logging.WARNING)
logging.getLogger().addHandler(_shown)
logging.getLogger().addHandler(_Keep())
"""

IMPORT = "import xformers, xformers.ops\nprint('imported xformers', xformers.__version__, 'triton available:', xformers._is_triton_available(), flush=True)\n"
PRETEND_NOTE = ("stand-in: the child made torch.cuda report one CUDA device of capability {cap} on this "
                "machine without a GPU (xFormers asks before trying Triton); nothing ran on it")


def env(ctx, rel, key: str, with_tool: bool = False):
    """The release's environment by uv, then triton (and setuptools, which uv never installs)
    uninstalled: a Linux environment whose triton is gone."""
    label, reqs = rel
    tool, target = b.uv_env(ctx, f"xf-triton-{key}-{label}", *reqs)
    res = b.uv_pip(tool, target, "uninstall", "triton", "setuptools")
    if res.returncode != 0:
        raise RuntimeError(f"uv pip uninstall triton failed: {res.tail(400)}")
    note = (f"xformers {label}: torch {target.version('torch')}, triton uninstalled "
            f"(installed now: {target.version('triton')}), setuptools {target.version('setuptools')}")
    if note not in ctx.notes:
        ctx.note(note)
    return (tool, target) if with_tool else target


def child(ctx, target, body: str, cap: str | None = "9.0", pre: str = "", **extra: str) -> _venv.Run:
    code = KEEP_LOGS + pre
    if cap:
        major, minor = cap.split(".")
        code += PRETEND.format(major=major, minor=minor)
        if PRETEND_NOTE.format(cap=cap) not in ctx.notes:
            ctx.note(PRETEND_NOTE.format(cap=cap))
    return target.python_run(code + body, timeout=600, cwd=_venv._tmp_root(), **extra)


def how(res: _venv.Run) -> str:
    """A run in a few words (its argv is the whole child program)."""
    return "timed out" if res.timed_out else f"exit {res.returncode}"


def records(res: _venv.Run) -> list[dict]:
    return [json.loads(line[len("ERRKB-LOG "):]) for line in res.output.splitlines() if line.startswith("ERRKB-LOG ")]


def relog(res: _venv.Run) -> None:
    for r in records(res):
        logging.getLogger(r["name"]).log(r["level"], r["msg"])


def notice(res: _venv.Run) -> dict | None:
    return next((r for r in records(res) if templates.search_regex(MESSAGE).search(r["msg"])), None)


def shown(res: _venv.Run) -> str:
    """What users see: the output without the kept records."""
    return "\n".join(line for line in res.output.splitlines() if not line.startswith("ERRKB-LOG "))


def printed_notice(res: _venv.Run, label: str) -> None:
    if _venv.tool_message(shown(res), MESSAGE) is None:
        raise AssertionError(f"{label}: the notice is not in the printed text: {shown(res)[-600:]}")


def imported(res: _venv.Run, label: str) -> str:
    """The child's last line: `import xformers.ops` went through (the notice's own traceback, which
    0.0.24+ logs, is no failure)."""
    line = next((x for x in res.output.splitlines() if x.startswith("imported xformers")), None)
    if res.returncode != 0 or line is None:
        raise AssertionError(f"import xformers.ops on {label} did not finish ({how(res)}): {shown(res)[-500:]}")
    return line


def quiet_import(ctx, res: _venv.Run, label: str, what: str) -> str:
    """The step's check where the notice must not appear: noted, no notice logged on the
    `xformers` logger, and `import xformers.ops` went through; the child's last line."""
    ctx.note(f"{label} {what}: {how(res)}; logged {[r['msg'][:80] for r in records(res)]}; "
             f"printed {shown(res)[-300:]!r}")
    ctx.not_logged(LOGGER, relog, res)
    return ctx.call(imported, res, label)


def reproduce(ctx):
    old, new = env(ctx, OLD, "plain"), env(ctx, NEW, "plain")
    r_old, r_new = child(ctx, old, IMPORT), child(ctx, new, IMPORT)
    for label, res in ((OLD[0], r_old), (NEW[0], r_new)):
        ctx.note(f"{label} `import xformers.ops`: {how(res)}; printed: {shown(res)[-700:]!r}")
        ctx.expect_logged(LOGGER, relog, res)
        ctx.call(printed_notice, res, label)
        ctx.call(imported, res, label)

    def old_shape():
        rec = notice(r_old)
        if not re.fullmatch(re.escape(MESSAGE) + r"\.\nError caught was: .+", rec["msg"]) or rec["exc"]:
            raise AssertionError(f"0.0.23.post1's line is not '<message>.' + 'Error caught was: ...': {rec!r}")
        ctx.note(f"0.0.23.post1 logged on {rec['name']!r}: {rec['msg']!r}, no traceback")

    def new_shape():
        rec = notice(r_new)
        last = (rec["exc"] or "").strip().splitlines()[-1:] or [""]
        if rec["msg"] != MESSAGE or "Error caught was" in rec["msg"] or not last[0].startswith("ModuleNotFoundError"):
            raise AssertionError(f"0.0.33.post2's line is not the message alone with a traceback: {rec!r}")
        ctx.note(f"0.0.33.post2 logged on {rec['name']!r}: {rec['msg']!r}, traceback ending {last[0]!r}")

    ctx.call(old_shape)
    ctx.call(new_shape)


def fix_1(ctx):
    """python -m xformers.info: the compiled attention operators still read 'available'."""
    info = "import runpy\nrunpy.run_module('xformers.info', run_name='__main__')\n"
    for rel, compiled in ((OLD, ("cutlassF", "cutlassB", "flshattF")), (NEW, ("cutlassF-pt", "cutlassB-pt", "fa2F"))):
        res = child(ctx, env(ctx, rel, "plain"), info)
        table = dict(re.findall(r"^(\S+):\s+(\S+)\s*$", shown(res), re.M))

        def check(table=table, compiled=compiled, label=rel[0]):
            if table.get("is_triton_available") != "False":
                raise AssertionError(f"{label}: xformers.info did not run or says Triton is there: {shown(res)[-600:]}")
            for name in compiled:
                hits = {k: v for k, v in table.items() if k.startswith(f"memory_efficient_attention.{name}")}
                if not hits or any(v != "available" for v in hits.values()):
                    raise AssertionError(f"{label}: {name} is not listed as available: {hits}")

        ctx.call(check)
        mea = {k.split(".", 1)[1]: v for k, v in table.items() if k.startswith("memory_efficient_attention.")}
        ctx.note(f"xformers {rel[0]} without triton, `python -m xformers.info`: is_triton_available "
                 f"{table.get('is_triton_available')}; memory_efficient_attention: {mea}")
        if "triton_splitKF" in mea:
            ctx.note(f"xformers {rel[0]}: triton_splitKF reads {mea['triton_splitKF']!r} without Triton")
    ctx.note("not checked here: that attention then runs (no GPU)")


def fix_2(ctx):
    """XFORMERS_FORCE_DISABLE_TRITON=1, or the `xformers` logger at ERROR: no notice."""
    for rel in (OLD, NEW):
        target = env(ctx, rel, "plain")
        res = child(ctx, target, IMPORT, XFORMERS_FORCE_DISABLE_TRITON="1")
        quiet_import(ctx, res, rel[0], "XFORMERS_FORCE_DISABLE_TRITON=1")
        quiet = "import logging; logging.getLogger('xformers').setLevel(logging.ERROR)\n"
        quiet_import(ctx, child(ctx, target, IMPORT, pre=quiet), rel[0], "xformers logger at ERROR")

    # The caveat: XFORMERS_ENABLE_TRITON=1 without Triton (0.0.27 on).
    res = child(ctx, env(ctx, NEW, "plain"), IMPORT, XFORMERS_ENABLE_TRITON="1")
    ctx.note(f"{NEW[0]} XFORMERS_ENABLE_TRITON=1 without triton: {how(res)}; {_venv.last_exception(res.output, 200)}")

    def enable_fails_at_import():
        if "imported xformers" in res.output or _venv.last_exception(res.output) != "ModuleNotFoundError: No module named 'triton'":
            raise AssertionError(f"expected `import xformers.ops` to stop on No module named 'triton': {res.tail(500)}")

    ctx.call(enable_fails_at_import)
    ctx.note("0.0.13 (root logger, no such variable) not run here")


def fix_3(ctx):
    ctx.skip("Windows only: triton-windows on a Windows Python; this machine is Linux")


REQUIRED = "import importlib.metadata as m; print('REQ', [r for r in m.requires('torch') if r.startswith('triton')])\n"


def fix_4(ctx):
    """Reinstall the triton torch requires (printed as the fix prints it); then, as the fix says,
    setuptools when the caught error names it."""
    for rel in (OLD, NEW):
        tool, target = env(ctx, rel, "fix4", with_tool=True)
        before = child(ctx, target, IMPORT)
        if notice(before) is None:
            raise RuntimeError(f"{rel[0]}: no notice before the fix: {before.tail(400)}")
        req = _venv.printed(target.python_run(REQUIRED, cwd=_venv._tmp_root()), "REQ")
        pin = re.search(r"triton\s*\(?==\s*([\w.]+)", req)
        if not pin:
            raise RuntimeError(f"{rel[0]}: torch names no triton pin: {req}")
        got = b.uv_pip(tool, target, "install", f"triton=={pin.group(1)}")
        if got.returncode != 0:
            ctx.skip(f"could not install triton=={pin.group(1)}: {got.tail(300)}")
        after = child(ctx, target, IMPORT)
        ctx.note(f"{rel[0]}: torch requires {req[4:]}; `uv pip install triton=={pin.group(1)}`; then {how(after)}, "
                 f"logged {[r['msg'][:120] for r in records(after)]}")
        rec = notice(after)
        if rec is not None and "setuptools" in (rec["msg"] + (rec["exc"] or "")):
            got = b.uv_pip(tool, target, "install", "setuptools")
            if got.returncode != 0:
                ctx.skip(f"could not install setuptools: {got.tail(300)}")
            after = child(ctx, target, IMPORT)
            ctx.note(f"{rel[0]}: the notice named setuptools; `uv pip install setuptools` ({target.version('setuptools')}); "
                     f"then {how(after)}")
        line = quiet_import(ctx, after, rel[0], "after the install")

        def triton_on(line=line, label=rel[0]):
            if "triton available: True" not in line:
                raise AssertionError(f"{label}: xFormers still reports no Triton: {line}")

        ctx.call(triton_on)
        ctx.note(f"{rel[0]}: {line}")


def control(ctx):
    """No CUDA device seen (0.0.16 on): no notice; a device below 8.0 (0.0.24 on): no notice on
    0.0.33.post2, the notice on 0.0.23.post1."""
    for rel in (OLD, NEW):
        quiet_import(ctx, child(ctx, env(ctx, rel, "plain"), IMPORT, cap=None), rel[0], "without a CUDA device")
    quiet_import(ctx, child(ctx, env(ctx, NEW, "plain"), IMPORT, cap="7.5"), NEW[0], "on a capability-7.5 device")
    res = child(ctx, env(ctx, OLD, "plain"), IMPORT, cap="7.5")
    ctx.note(f"{OLD[0]} on a capability-7.5 device: logged {[r['msg'][:80] for r in records(res)]}")

    def old_still_logs():
        if notice(res) is None:
            raise AssertionError(f"0.0.23.post1 (no capability check before 0.0.24) did not log the notice at 7.5: {res.tail(400)}")

    ctx.call(old_still_logs)
