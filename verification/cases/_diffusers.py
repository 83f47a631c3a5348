"""diffusers releases on the CPU: each release with its dependencies by pip --target (huggingface_hub
below 0.26, which still has what the older releases import), run by with_torch()'s Python, offline."""

from verification.cases import _builds as b
from verification.cases import _venv

HUB = "huggingface_hub<0.26"


def _installed(ctx, env, release: str) -> str:
    folder = _venv._tmp_root() / f"target-diffusers-{release}"
    stamp = folder / ".errkb-done"
    if not stamp.exists():
        res = env.pip("install", "--target", folder, f"diffusers=={release}", HUB, timeout=900)
        if res.returncode != 0:
            ctx.skip(f"could not install diffusers {release}: {res.tail(400)}")
        stamp.write_text(release)
    ctx.note(f"diffusers=={release} and {HUB} installed with pip --target")
    return str(folder)


def run(ctx, code: str, release: str, what: str, done: str) -> _venv.Run:
    """`code` with diffusers `release`; notes `what` and whether the child printed `done`."""
    env = b.with_torch(ctx)
    res = b.run_with_torch(ctx, code, path=[_installed(ctx, env, release)], env=env, extra_env={"HF_HUB_OFFLINE": "1"})
    ctx.note(f"diffusers {release}, {what}: " + ("ran" if done in res.output else _venv.last_exception(res.output, 200)))
    return res


def printed_values(ctx, res: _venv.Run, prefix: str) -> list[float]:
    """The list of numbers the child printed after `prefix`; the exception it printed instead refutes."""
    line = ctx.call(_venv.printed, res, prefix)
    return [float(x) for x in line[len(prefix) + 1:].strip("[]").split(",")]
