"""uv refuses a direct wheel URL whose tags do not fit the environment: 'A URL dependency is
incompatible with the current platform: <url>'.

Reproduce: uv 0.9.0, `uv pip install "xformers @ http://127.0.0.1:<port>/xformers-0.0.28.post3-cp312-cp312-manylinux_2_28_x86_64.whl"`
into a CPython 3.11 environment made by `uv venv`. The URL is served from this machine (GitHub is not
reachable here; a file:// URL is a path dependency to uv, which words the error 'A path dependency
is incompatible ...'); the wheel is PyPI's real cp312 file, standing in for a flash-attn release
wheel: uv judges the file name's tags, which is the record's situation. Fix 1: the same requirement
with the fix's environment marker (`sys_platform == 'linux' and platform_machine == 'x86_64' and
python_version == '3.12'`) is skipped by uv on 3.11 (nothing to
install, no error), and the cp311 file of the same release installs (--no-deps: its torch 2.5.1 pin is not what is checked). Fix 2 is for Windows."""

import functools
import http.server
import threading

from verification.cases import _builds as b
from verification.cases import _venv

BACKEND = "env-build"
REQUIRES = {"cuda": False}
TIMEOUT = 600
WHEEL = "xformers-0.0.28.post3-{tag}-{tag}-manylinux_2_28_x86_64.whl"


def _serve(ctx):
    folder = _venv.cache_dir() / "wheels"
    env = _venv.venv(ctx, "fresh-" + b.PIP, pip=b.PIP)
    for tag in ("cp311", "cp312"):
        if not (folder / WHEEL.format(tag=tag)).is_file():
            env.pip("download", "--no-deps", "--only-binary", ":all:", "--python-version", tag[2] + "." + tag[3:],
                    "--platform", "manylinux_2_28_x86_64", "xformers==0.0.28.post3", "-d", folder, timeout=600)
        if not (folder / WHEEL.format(tag=tag)).is_file():
            ctx.skip(f"could not download {WHEEL.format(tag=tag)}")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def _install(ctx, key, requirement, *extra):
    tool, env = b.uv_env(ctx, key)
    res = b.uv_pip(tool, env, "install", *extra, requirement, timeout=300)
    ctx.note(f"uv {b.UV} pip install {requirement!r}: exit {res.returncode}")
    return res


def reproduce(ctx):
    server, url = _serve(ctx)
    try:
        res = _install(ctx, "url-312", f"xformers @ {url}{WHEEL.format(tag='cp312')}")
    finally:
        server.shutdown()
    ctx.expect_error(_venv.raise_tool_message, "uv", res.output, ctx.record["template"])


def fix_1(ctx):
    server, url = _serve(ctx)
    try:
        marked = _install(ctx, "url-marker", f"xformers @ {url}{WHEEL.format(tag='cp312')} ; sys_platform == 'linux' and platform_machine == 'x86_64' and python_version == '3.12'")
        right = _install(ctx, "url-311", f"xformers @ {url}{WHEEL.format(tag='cp311')}", "--no-deps")
    finally:
        server.shutdown()

    def fine():
        for res in (marked, right):
            _venv.raise_tool_message("uv", res.output, ctx.record["template"])
            if res.returncode != 0:
                raise AssertionError(res.tail(500))
        if "xformers" not in right.output:
            raise AssertionError(f"the cp311 wheel was not installed: {right.tail(300)}")
        ctx.note("marker: " + " / ".join(marked.output.strip().splitlines())[:150] + "; cp311 URL: "
                 + " / ".join(l.strip() for l in right.output.splitlines() if "xformers" in l)[:150])

    ctx.call(fine)


def fix_2(ctx):
    ctx.skip("Windows wheels: not this machine")
