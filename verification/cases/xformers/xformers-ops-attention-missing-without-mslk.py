"""`xformers.ops.memory_efficient_attention` on an xFormers development build whose mslk requirement
was met by PyPI's empty mslk 0.0.0: "module 'xformers.ops' has no attribute 'memory_efficient_attention'".

Real PyPI wheels in a uv environment with torch 2.14.1 (verification/cases/xformers/_mslk.py).
Reproduce on 0.0.35.dev1130 (silent) and, noted, on 0.0.35.dev1147 (warns first). Fix 1 is a
diagnosis: its command must show mslk 0.0.0 installed while importlib finds no mslk module. Fix 2
needs PyTorch's wheel index (out of reach): skipped. Fix 3 installs xformers 0.0.35 and the lookup
must succeed."""

from verification.cases import _venv
from verification.cases.xformers import _mslk as m

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1200


def reproduce(ctx):
    loud = m.run(m.env(ctx, "xf-dev1147-mslk-placeholder", m.DEV_WARNS, m.PLACEHOLDER), m.LOOKUP)
    ctx.note(f"0.0.35.dev1147 with mslk 0.0.0: {_venv.last_exception(loud.output, 200)}; "
             f"logged before it: {m.warning_heads(loud.output)}")
    res = m.run(m.env(ctx, "xf-dev1130-mslk-placeholder", m.DEV_SILENT, m.PLACEHOLDER), m.LOOKUP)
    ctx.note(f"0.0.35.dev1130 with mslk 0.0.0: {_venv.last_exception(res.output, 200)}; "
             f"logged before it: {m.warning_heads(res.output)}")
    ctx.expect_error(_venv.reraise, res.output, ctx.record["template"], "AttributeError")


def fix_1(ctx):
    target = m.env(ctx, "xf-dev1130-mslk-placeholder", m.DEV_SILENT, m.PLACEHOLDER)
    res = m.run(target, m.FIND_SPEC)

    def placeholder_seen():
        line = _venv.printed(res, "find_spec ")
        version = target.version("mslk")  # what `pip show mslk` reads (uv's environment has no pip)
        if line != "find_spec None" or version != "0.0.0":
            raise AssertionError(f"expected find_spec None next to mslk 0.0.0, got {line!r} and {version!r}")
        ctx.note(f"the fix's command prints {line!r} while the installed distribution mslk is {version} "
                 "(importlib.metadata, which `pip show` reads; this uv environment has no pip)")

    ctx.call(placeholder_seen)


def fix_2(ctx):
    ctx.skip("installs mslk from download.pytorch.org, which this machine cannot reach")


def fix_3(ctx):
    res = m.run(m.env(ctx, "xf-0.0.35-release", m.RELEASE), m.LOOKUP)
    ctx.call(_venv.finished, res, "found memory_efficient_attention", "the lookup on xformers 0.0.35")
    ctx.note("xformers 0.0.35 (no mslk installed): xformers.ops.memory_efficient_attention exists")
