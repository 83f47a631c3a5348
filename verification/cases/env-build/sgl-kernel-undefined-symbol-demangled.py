"""`undefined symbol: c10::...` from sgl-kernel: the loader's `_ZN3c10...` failure read as C++ (c++filt).

The loader prints mangled names; this record is the readable spelling. The failure is real
(verification/cases/_sgl_kernel_abi.py): sgl-kernel 0.3.5, which sglang 0.5.1 pins with torch 2.8.0, imported
next to torch 2.9.1 with the stub driver of CUDA 12.4 (verification/cases/_driver_stub.py). The reproduce
step demangles the symbol the loader printed with c++filt (GNU binutils); the readable line must be an
instance of the record's template (a c10:: function).

Fix 1 as written: its first command (`pip show sglang | grep -i requires`) on sglang 0.5.3's wheel, then the
pinned pair it installs (torch 2.8.0, sgl-kernel 0.3.14.post1) imported. Fix 2 (a source build) is a CUDA
compile of hours: not run.
"""

import os

from verification.cases import _abi_wheels as abi
from verification.cases import _builds as b
from verification.cases import _sgl_kernel_abi as sk
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 1800
UPGRADE = "2.9.1"


def reproduce(ctx):
    if sk.pins(ctx, "0.5.1")["torch"] == UPGRADE:
        raise RuntimeError("sglang 0.5.1 pins the torch the step upgrades to: no mismatch")
    got, _ = sk.import_kernel(ctx, "0.3.5", UPGRADE, "12.4")
    if got is None or abi.symbol(got[1]) is None:
        raise RuntimeError(f"the import gave no undefined symbol: {got}")
    mangled = abi.symbol(got[1])
    readable = abi.demangle(mangled)
    ctx.note(f"c++filt {mangled} -> {readable}")
    ctx.expect_error(abi.raise_again, (got[0], got[1].replace(mangled, readable)))


def fix_1(ctx):
    pair = sk.pins(ctx, "0.5.3")
    env = _venv.venv(ctx, "fresh-" + b.PIP, pip=b.PIP)  # pip, for the fix's `pip show`
    site = b.target_dir(ctx, "sglang==0.5.3", no_deps=True, env=env)
    shown = _venv.run(["bash", "-c", abi.record_fix("env-build", "sgl-kernel-undefined-symbol-demangled", 1)["after"]
                       .splitlines()[0]],
                      env=_venv.tool_env(PATH=f"{env.path / 'bin'}:{os.environ['PATH']}", PYTHONPATH=site),
                      cwd=_venv._tmp_root(), timeout=300)
    ctx.note("the fix's first command, sglang 0.5.3 installed: " + shown.output.strip()[:600])

    def shows_the_pins():
        want = (f"torch=={pair['torch']}", f"sgl-kernel=={pair['sgl-kernel']}")
        if not all(w in shown.output.replace(" ", "") for w in want):
            raise AssertionError(f"the fix's first command does not show {' and '.join(want)}: {shown.tail(300)}")

    ctx.call(shows_the_pins)
    got, _ = sk.import_kernel(ctx, pair["sgl-kernel"], pair["torch"], "12.4")
    ctx.call(abi.raise_again, got)


def fix_2(ctx):
    ctx.skip("building sgl-kernel from source against the installed torch is a CUDA compile of hours on this "
             "2-core machine")
