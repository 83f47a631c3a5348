"""`import sgl_kernel` next to a torch other than the one its wheel was built against: "undefined symbol: _Z...".

Real wheels on the CPU (verification/cases/_sgl_kernel_abi.py), with the stub driver of CUDA 12.4
(verification/cases/_driver_stub.py: a driver new enough for both wheels, so the loader's only obstacle is
torch). sglang 0.5.1 pins sgl-kernel 0.3.5 with torch 2.8.0, sglang 0.5.3 sgl-kernel 0.3.14.post1 with torch
2.8.0; the mismatch is torch 2.9.1, an upgrade of torch alone.

Reproduce: sgl-kernel 0.3.5 next to torch 2.9.1: `import sgl_kernel` raises the loader's ImportError with a
mangled torch symbol (0.3.5 imports common_ops plainly). Then what the record says of 0.3.14.post1: next to
torch 2.9.1 its wrapper's message leaves the loader text out, and sgl_kernel's DEBUG log line carries it.
Fix 1: each pinned pair (torch 2.8.0 with 0.3.14.post1, as the fix's command installs, and with 0.3.5) imports.
"""

from verification.cases import _abi_wheels as abi
from verification.cases import _sgl_kernel_abi as sk
from errkb import templates

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
UPGRADE = "2.9.1"


def reproduce(ctx):
    pinned = sk.pins(ctx, "0.5.1")["torch"]
    if pinned == UPGRADE:
        raise RuntimeError("sglang 0.5.1 pins the torch the step upgrades to: no mismatch")
    got, _ = sk.import_kernel(ctx, "0.3.5", UPGRADE, "12.4")
    if got is not None and abi.symbol(got[1]):
        ctx.note(f"c++filt {abi.symbol(got[1])} -> {abi.demangle(abi.symbol(got[1]))}")
    ctx.expect_error(abi.raise_again, got)

    new = sk.pins(ctx, "0.5.3")["sgl-kernel"]
    wrapped, out = sk.import_kernel(ctx, new, UPGRADE, "12.4", debug=True)
    failed = [l.strip() for l in out.splitlines() if "Failed to load" in l]
    ctx.note(f"{new} with DEBUG logging: " + (failed[0][:400] if failed else "no 'Failed to load' line"))

    def loader_text_only_in_debug_log():
        pattern = templates.search_regex(ctx.record["template"])
        if wrapped is None or "Could not load any common_ops library" not in wrapped[1]:
            raise AssertionError(f"sgl-kernel {new} next to torch {UPGRADE} did not raise its wrapper: {wrapped}")
        if pattern.search(wrapped[1]):
            raise AssertionError(f"sgl-kernel {new}'s message carries the loader text after all")
        if not any(pattern.search(l) for l in failed):
            raise AssertionError(f"sgl-kernel {new}'s DEBUG log has no undefined-symbol line: {failed[:2]}")

    ctx.call(loader_text_only_in_debug_log)


def fix_1(ctx):
    for sglang in ("0.5.3", "0.5.1"):
        pair = sk.pins(ctx, sglang)
        got, _ = sk.import_kernel(ctx, pair["sgl-kernel"], pair["torch"], "12.4")
        ctx.call(abi.raise_again, got)
    ctx.note("sglang's Python itself (in the fix's command) is not installed: the pair's import is what the "
             "record is about")
