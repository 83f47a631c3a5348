"""The Dreambooth extension's '[!] Not using xformers memory efficient attention.' at import of
dreambooth/xattention.py (d8ahazard/sd_dreambooth_extension, November 2022).

The file is read from a local clone at the commits named (verification/cases/_downstream.py; nothing of it
is committed, nothing is stood in) and imported as the module `dreambooth.xattention` by file location, with
torch 2.13.0+cpu (with_cpu_torch(), local wheel) and the extension's pins of the time, `pip --target`:
diffusers 0.7.2 (with huggingface_hub<0.26 and attrs, which the file imports), and for 593f5e7 also
transformers 4.21.0 and einops 0.4.1 (`--no-deps`). xformers is not installed.

Only the first commit's condition can run without the AUTOMATIC1111 web UI: at 3dd55f3 the module checks
diffusers' is_xformers_available() alone; from d4c0312 to 6d777b5 it reads the web UI's
`modules.shared.cmd_opts` (--xformers / --force-enable-xformers), which needs the web UI, so that condition
is not shown.

Reproduce: importing xattention.py at 3dd55f3 without xformers prints the record's line and leaves
`xformers` None. Fix 1 (launch the web UI with --xformers, xformers installed) needs the web UI and an
xformers built for a CUDA torch: skipped. Fix 2: xattention.py at 593f5e7 (the update) imports without the
line; its replace_unet_cross_attn_to_default() patches diffusers 0.7.2's CrossAttention, whose forward then
gives the same output as the unpatched class (same weights, within 1e-5). Fix 3 (memory settings of a
training run) is advice about GPU memory: skipped."""


from verification.cases import _builds as b
from verification.cases import _downstream, _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 900
REPO = "d8ahazard/sd_dreambooth_extension"
OLD = "3dd55f3b81950f34fee42e76a72661e81ca36904"
NEW = "593f5e74fb7848e5d093291adbf0a1149cacab3e"
DIFFUSERS = "diffusers==0.7.2 huggingface_hub<0.26 attrs"
NEW_PINS = "transformers==4.21.0 einops==0.4.1"
TOL = 1e-5

CHILD = r"""
import importlib.util, sys, torch, diffusers
print('ERRKB-VERSIONS diffusers', diffusers.__version__, 'torch', torch.__version__, flush=True)
torch.manual_seed(0)
from diffusers.models.attention import CrossAttention
layer = CrossAttention(query_dim=32, heads=2, dim_head=16).eval()
x = torch.randn(2, 10, 32)
with torch.no_grad():
    before = layer(x)
spec = importlib.util.spec_from_file_location('dreambooth.xattention', FILE)
m = importlib.util.module_from_spec(spec)
sys.modules['dreambooth.xattention'] = m
spec.loader.exec_module(m)
print('ERRKB-IMPORTED xformers', getattr(m, 'xformers', 'no such name'), flush=True)
if hasattr(m, 'replace_unet_cross_attn_to_default'):
    m.replace_unet_cross_attn_to_default()
    with torch.no_grad():
        after = layer(x)
    print('ERRKB-PATCHED', float((after - before).abs().max()), bool(torch.isfinite(after).all()), flush=True)
"""

_runs: dict = {}


def _run(ctx, commit: str) -> _venv.Run:
    if commit not in _runs:
        env = b.with_cpu_torch(ctx)
        _venv.noted(ctx, env)
        root = _downstream.tree(ctx, REPO, commit, ("dreambooth/xattention.py",))
        path = [_target(ctx, env, "diffusers-0.7.2", DIFFUSERS, False)]
        if commit == NEW:
            path.append(_target(ctx, env, "transformers-4.21.0", NEW_PINS, True))
        code = CHILD.replace("FILE", repr(str(root / "dreambooth" / "xattention.py")))
        _runs[commit] = b.run_with_torch(ctx, code, env=env, path=path)
    res = _runs[commit]
    ctx.note(f"xattention.py at {commit[:7]}: " + " | ".join(
        l for l in res.output.splitlines() if l.startswith(("ERRKB-", "[!]"))) + f" | {_venv.last_exception(res.output, 200)}")
    if "ERRKB-VERSIONS" not in res.output:
        ctx.skip(f"diffusers 0.7.2 did not import here: {res.tail(400)}")
    return res


def _target(ctx, env, name: str, requirements: str, no_deps: bool) -> str:
    folder = _venv._tmp_root() / f"target-dreambooth-{name}"
    if not (folder / ".errkb-done").exists():
        res = env.pip("install", "--target", folder, *(["--no-deps"] if no_deps else []), *requirements.split(),
                      timeout=900)
        if res.returncode != 0:
            ctx.skip(f"could not install {requirements}: {res.tail(300)}")
        (folder / ".errkb-done").write_text(requirements)
    note = f"{requirements} (pip --target{', --no-deps' if no_deps else ''})"
    if note not in ctx.notes:
        ctx.note(note)
    return str(folder)


def reproduce(ctx):
    res = _run(ctx, OLD)
    ctx.expect_error(_venv.printed_after, res, "ERRKB-IMPORTED xformers None",
                     "the module did not import with xformers None", "print", ctx.record["template"])


def fix_1(ctx):
    ctx.skip("the condition from d4c0312 on reads the AUTOMATIC1111 web UI's --xformers flag, and xformers needs a "
             "CUDA torch: needs the web UI on a GPU machine")


def fix_2(ctx):
    res = _run(ctx, NEW)

    def quiet():
        _venv.raise_tool_message("print", res.output, ctx.record["template"])
        _venv.reraise(res.output)
        line = next((l for l in res.output.splitlines() if l.startswith("ERRKB-PATCHED")), None)
        if line is None:
            raise AssertionError(f"the updated module did not patch CrossAttention: {res.tail(400)}")
        diff, finite = float(line.split()[1]), line.split()[2] == "True"
        ctx.note(f"patched CrossAttention vs diffusers 0.7.2's own: max difference {diff:.2e} (tolerance {TOL})")
        if not finite or diff > TOL:
            raise AssertionError(f"the patched attention differs: {line}")
    ctx.call(quiet)


def fix_3(ctx):
    ctx.skip("advice on GPU memory use of a training run: needs the web UI training on a GPU")
