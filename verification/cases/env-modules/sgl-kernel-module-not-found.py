"""`import sgl_kernel` where the sgl-kernel distribution is not installed: 'No module named 'sgl_kernel''.

Reproduce: a new environment (CPython 3.11, pip 26.3, nothing else), `python -c "import sgl_kernel"`
(the import SGLang's runtime makes). Fix 2 as written: SGLang's wheel from PyPI (`pip download
--no-deps`), its METADATA read for the kernel pin: the caveat's examples (0.5.3 requires
sgl-kernel==0.3.14.post1; 0.4.3 puts sgl-kernel>=0.0.3.post6 in its srt extra). Fix 1 installs the
whole CUDA stack of sglang[all] (gigabytes; sgl_kernel then loads only with a GPU driver): not run."""

from verification.cases import _builds as b

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 600
PINS = {"0.5.3": "sgl-kernel==0.3.14.post1", "0.4.3": "sgl-kernel>=0.0.3.post6"}


def reproduce(ctx):
    b.fresh_import_refused(ctx, "import sgl_kernel")


def fix_1(ctx):
    ctx.skip("installs sglang[all] with its CUDA wheels (gigabytes); importing sgl_kernel then needs the GPU driver's libcuda")


def fix_2(ctx):
    metas = {}
    for release in PINS:
        metas[release] = b.wheel_metadata(ctx, "sglang", release)

    def pins():
        for release, pin in PINS.items():
            lines = [l for l in metas[release].splitlines() if l.startswith("Requires-Dist:") and "kernel" in l.lower()]
            if not any(pin in l.replace(" ", "") for l in lines):
                raise AssertionError(f"sglang {release} declares {lines}, not {pin}")
            ctx.note(f"sglang {release} METADATA: " + next(l for l in lines if pin in l.replace(' ', '')))

    ctx.call(pins)
