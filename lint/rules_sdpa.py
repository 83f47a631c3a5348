"""PyTorch scaled_dot_product_attention: masks the chosen backend cannot take."""

from __future__ import annotations

import libcst as cst

from errkb.lint.analysis import PRESENT, QualName
from errkb.lint.edits import RuleFix, code, insert_after, replace
from errkb.lint.rule import Example, Rule, register
from errkb.lint.targets import SDP_BACKEND, SDP_KERNEL_LEGACY, SDPA, SDPA_KERNEL, inside

_F = "import torch.nn.functional as F\n"
_CTX = "from torch.nn.attention import sdpa_kernel, SDPBackend\n"


def _innermost(index, site):
    """(the innermost sdpa_kernel / sdp_kernel context, its targets), or (None, None)."""
    for ctx in reversed(site.withs):
        targets = index.resolve(ctx.call.func, ctx.scope)
        if targets and targets <= SDPA_KERNEL | SDP_KERNEL_LEGACY:
            return ctx, targets
    return None, None


def sdpa_backends(index, site) -> set[str] | None:
    """Backends the innermost visible sdpa_kernel / sdp_kernel context allows (None: no context)."""
    ctx, targets = _innermost(index, site)
    if ctx is not None:
        if targets <= SDPA_KERNEL:
            if not ctx.call.args:
                return None
            arg = ctx.call.args[0].value
            items = [e.value for e in arg.elements] if isinstance(arg, (cst.List, cst.Tuple)) else [arg]
            names = set()
            for item in items:
                v = index.value(item, ctx.scope)
                if not (isinstance(v, QualName) and v.name.startswith(SDP_BACKEND + ".")):
                    return None  # not visible: say nothing
                names.add(v.name.rsplit(".", 1)[1])
            return names
        if targets and targets <= SDP_KERNEL_LEGACY:
            flags = {"enable_flash": True, "enable_math": True, "enable_mem_efficient": True,
                     "enable_cudnn": True}
            for a in ctx.call.args:
                if a.keyword is None or a.keyword.value not in flags:
                    return None
                v = index.value(a.value, ctx.scope)
                if type(v) is not bool:
                    return None
                flags[a.keyword.value] = v
            return {name for name, on in (("FLASH_ATTENTION", flags["enable_flash"]),
                                          ("MATH", flags["enable_math"]),
                                          ("EFFICIENT_ATTENTION", flags["enable_mem_efficient"]),
                                          ("CUDNN_ATTENTION", flags["enable_cudnn"])) if on}
    return None


@register
class SdpaFlashOnlyWithMask(Rule):
    """Inside `sdpa_kernel(SDPBackend.FLASH_ATTENTION)` (flash as the only backend) SDPA cannot
    take an attn_mask: the flash kernel rejects it and, with nothing else allowed, the call fails
    with 'No available kernel'."""

    CODE = "EKB301"
    NAME = "sdpa-flash-only-attn-mask"
    RECORDS = ("sdpa-flash-attn-mask-unsupported", "sdpa-no-available-kernel")
    TARGETS = SDPA
    PREFILTER = inside(SDPA, SDPA_KERNEL | SDP_KERNEL_LEGACY)  # reports only in such a context
    HINT = ("with flash as the only backend the call then fails with RuntimeError 'No available kernel. "
            "Aborting execution.'; allow EFFICIENT_ATTENTION in the context, or use is_causal=True")
    FIXES = {"sdpa-flash-attn-mask-unsupported": 2}
    VALID = [
        _F + _CTX + "with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n    F.scaled_dot_product_attention(q, k, v, is_causal=True)",
        _F + _CTX + "with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):\n"
        "    F.scaled_dot_product_attention(q, k, v, attn_mask=m)",
        _F + _CTX + "with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n    F.scaled_dot_product_attention(q, k, v, None)",
    ]
    INVALID = [
        Example(_F + _CTX + "with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n"
                "    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)",
                fixed=_F + _CTX + "with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):\n"
                "    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)"),
        Example("import torch\nfrom torch.nn.attention import sdpa_kernel, SDPBackend\n"
                "def f(q, k, v, m):\n    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):\n"
                "        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, m)\n"
                "        return torch.nn.functional.scaled_dot_product_attention(a, k, v, m)", findings=2,
                fixed="import torch\nfrom torch.nn.attention import sdpa_kernel, SDPBackend\n"
                "def f(q, k, v, m):\n    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):\n"
                "        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, m)\n"
                "        return torch.nn.functional.scaled_dot_product_attention(a, k, v, m)"),
        Example(_F + "import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, "
                "enable_mem_efficient=False, enable_cudnn=False):\n    F.scaled_dot_product_attention(q, k, v, attn_mask=m)",
                fixed=_F + "import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, "
                "enable_mem_efficient=True, enable_cudnn=False):\n    F.scaled_dot_product_attention(q, k, v, attn_mask=m)"),
    ]

    def check(self, site, targets, args, ctx):
        mask = args["attn_mask"]
        if mask.state == PRESENT and sdpa_backends(ctx.index, site) == {"FLASH_ATTENTION"}:
            yield self.report(mask.node, fix=self._allow_efficient(ctx.index, site))

    @staticmethod
    def _allow_efficient(index, site) -> RuleFix | None:
        """Allow EFFICIENT_ATTENTION too. Safe: flash keeps its priority, so every call flash
        could run still runs on flash; only the calls that would fail move to the
        memory-efficient kernel."""
        with_ctx, targets = _innermost(index, site)
        call = with_ctx.call
        title = "Allow the memory-efficient backend in this context"
        if targets <= SDP_KERNEL_LEGACY:
            flag = next(a for a in call.args if a.keyword.value == "enable_mem_efficient")  # False: flash only
            return RuleFix(title, True, (replace(flag.value, "True"),))
        arg = call.args[0].value
        items = list(arg.elements) if isinstance(arg, (cst.List, cst.Tuple)) else None
        flash = items[-1].value if items else arg
        if not (isinstance(flash, cst.Attribute) and flash.attr.value == "FLASH_ATTENTION"):
            return None  # spelt through a variable: no text to copy the enum from
        efficient = f"{code(flash.value)}.EFFICIENT_ATTENTION"
        if items is None:
            return RuleFix(title, True, (replace(arg, f"[{code(arg)}, {efficient}]"),))
        return RuleFix(title, True, (insert_after(items[-1].value, f", {efficient}"),))


_MATH_ONLY = ({"MATH"}, {"MATH", "FLASH_ATTENTION"})  # flash refuses any mask: math is left


@register
class SdpaMaskWithIsCausal(Rule):
    """attn_mask together with is_causal=True inside an `sdpa_kernel(...)` (or legacy
    `torch.backends.cuda.sdp_kernel(...)`) context that leaves SDPA's math kernel as the only
    backend able to take the mask (MATH alone, or MATH with FLASH_ATTENTION, which refuses every
    mask): the math kernel refuses the pair. Outside such a context the call is not reported: the
    fused kernels that take masks (CUDA memory-efficient, the CPU flash kernel) accept both, and
    on torch 2.11 a bare call passed on CUDA and on the CPU in float32 (the record's
    verification); whether it reaches the math kernel there depends on shapes, dtypes and the
    device, which the module does not show."""

    CODE = "EKB302"
    NAME = "sdpa-attn-mask-with-is-causal"
    RECORDS = ("sdpa-attn-mask-with-is-causal",)
    TARGETS = SDPA
    PREFILTER = inside(SDPA, SDPA_KERNEL | SDP_KERNEL_LEGACY)  # reports only in such a context
    HINT = ("this context leaves the math kernel as the only backend that can take the mask, and it "
            "refuses attn_mask with is_causal=True; fold the causal triangle into attn_mask and pass "
            "is_causal=False, drop attn_mask, or allow EFFICIENT_ATTENTION")
    VALID = [
        _F + "F.scaled_dot_product_attention(q, k, v, is_causal=True)",
        _F + "F.scaled_dot_product_attention(q, k, v, attn_mask=None, is_causal=True)",
        _F + "def f(q, k, v, mask=None):\n    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)",
        # held-out triage (an SGLang fork's CLIP encoder): the mask is None on one path, as with mask=None above
        _F + "def f(q, k, v, pad):\n    if pad is not None:\n        m = pad[:, None]\n    else:\n        m = None\n"
        "    return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)",
        # no context: the backend SDPA picks decides, and the fused kernels that take masks accept
        # both (ninth held-out round: a padded prefill on CUDA)
        _F + "F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)",
        "from torch.nn.functional import scaled_dot_product_attention as sdpa\n"
        "CAUSAL = True\nsdpa(q, k, v, m, 0.0, CAUSAL)",
        # ninth held-out round: a test suite's 4-D float64 CPU calls, which its assertions say return
        "import torch\nimport torch.nn.functional as F\n"
        "q = k = v = torch.randn(2, 4, 8, 16, dtype=torch.float64)\n"
        "mask = torch.zeros(8, 8, dtype=torch.bool)\n"
        "out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)",
        # a context that allows a mask-capable fused kernel, or one the module does not show
        _F + _CTX + "with sdpa_kernel([SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION]):\n"
        "    F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)",
        _F + _CTX + "with sdpa_kernel(backends):\n    F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)",
        _F + "import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash=False):\n"
        "    F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)",
        # math-only, but without the pair
        _F + _CTX + "with sdpa_kernel(SDPBackend.MATH):\n    F.scaled_dot_product_attention(q, k, v, attn_mask=m)",
    ]
    INVALID = [
        Example(_F + _CTX + "with sdpa_kernel(SDPBackend.MATH):\n"
                "    F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)"),
        Example(_CTX + "from torch.nn.functional import scaled_dot_product_attention as sdpa\n"
                "CAUSAL = True\nwith sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):\n"
                "    sdpa(q, k, v, m, 0.0, CAUSAL)"),
        # the legacy context (ninth round, not counted: a file forcing math on one path)
        Example(_F + "import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, "
                "enable_mem_efficient=False, enable_cudnn=False):\n"
                "    F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)"),
        Example(_F + "import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, "
                "enable_mem_efficient=False, enable_cudnn=False):\n"
                "    F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)"),
    ]

    def check(self, site, targets, args, ctx):
        mask, causal = args["attn_mask"], args["is_causal"]
        if (mask.state == PRESENT and causal.state == PRESENT and causal.value is True
                and sdpa_backends(ctx.index, site) in _MATH_ONLY):
            yield self.report(mask.node)
