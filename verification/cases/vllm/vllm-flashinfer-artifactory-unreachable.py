"""Without flashinfer-cubin, vLLM probes NVIDIA's artifactory; when it cannot connect it warns and treats TRT-LLM attention as unavailable."""

import http.server
import threading
from contextlib import contextmanager

from errkb.verify.case import Refuted
from verification.cases.vllm._vllm import FI_UTILS, flashinfer_utils

BACKEND = "vllm"
REQUIRES = {"packages": ["vllm.platforms.interface", "requests", "zmq"], "cuda": True, "arch": "sm90"}
# Every step asks what vLLM decides on this GPU (9.0), so it runs only there.

# Nothing listens on the discard port of this machine: the probe's connection is refused, as on a
# host without a route to edge.urm.nvidia.com (the lent GPU machine reaches nothing outside).
UNREACHABLE = "http://127.0.0.1:9/flashinfer-cubins/"


def _probe(major, minor, **kwargs):
    with flashinfer_utils(major, minor, **kwargs) as fi:
        return fi.has_nvidia_artifactory(), fi.supports_trtllm_attention(is_prefill=False)


@contextmanager
def _mirror():
    """A local HTTP server answering 200, standing for an internal cubin mirror."""
    class Ok(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Ok)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/flashinfer-cubins/"
    finally:
        server.shutdown()
        server.server_close()


def reproduce(ctx):
    # No flashinfer-cubin package (none here), VLLM_HAS_FLASHINFER_CUBIN unset, H200 (9.0).
    _, (reachable, trtllm) = ctx.expect_logged(FI_UTILS, _probe, 9, 0, env={"VLLM_HAS_FLASHINFER_CUBIN": "0"},
                                           FLASHINFER_CUBINS_REPOSITORY=UNREACHABLE)
    if reachable or trtllm:
        raise Refuted(f"artifactory reported reachable={reachable}, TRT-LLM decode available={trtllm}")


def fix_2(ctx):
    # FLASHINFER_CUBINS_REPOSITORY pointing at a reachable mirror: no warning, TRT-LLM decode
    # (XQA on SM90) counts as available.
    with _mirror() as url:
        reachable, trtllm = ctx.not_logged(FI_UTILS, _probe, 9, 0, env={"VLLM_HAS_FLASHINFER_CUBIN": "0"},
                                       FLASHINFER_CUBINS_REPOSITORY=url)
    if not (reachable and trtllm):
        raise Refuted(f"mirror: reachable={reachable}, TRT-LLM decode available={trtllm}")


def fix_3(ctx):
    # VLLM_HAS_FLASHINFER_CUBIN=1: the probe is skipped, so the unreachable URL does not matter.
    reachable, trtllm = ctx.not_logged(FI_UTILS, _probe, 9, 0, env={"VLLM_HAS_FLASHINFER_CUBIN": "1"},
                                   FLASHINFER_CUBINS_REPOSITORY=UNREACHABLE)
    if not (reachable and trtllm):
        raise Refuted(f"declared cubins: reachable={reachable}, TRT-LLM decode available={trtllm}")
