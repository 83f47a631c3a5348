"""SGLang's FlashAttention entry points: the FA4 kvcache wrappers, sgl-kernel's ver=4 switch and
the ver-dispatcher in sglang.kernels.ops.attention.flash_attention."""

from __future__ import annotations

import libcst as cst

from errkb.lint.analysis import ABSENT, PRESENT, UNKNOWN, literal
from errkb.lint.edits import RuleFix, add_keyword, code, passed_here, replace
from errkb.lint.rule import Example, Rule, register
from errkb.lint.targets import (DISPATCH, DISPATCH_KVCACHE, SGL_FA4_KVCACHE, SGL_KERNEL_KVCACHE,
                                last_names)

_KVCACHE_ANY = SGL_FA4_KVCACHE | DISPATCH_KVCACHE | SGL_KERNEL_KVCACHE

_IMPORT = "from sglang.kernels.ops.attention.flash_attention_v4 import flash_attn_with_kvcache\n"
_DISPATCH_IMPORT = "from sglang.kernels.ops.attention.flash_attention import flash_attn_with_kvcache\n"


def on_fa4_kvcache_path(targets, args) -> bool:
    """True when the call certainly runs SGLang's FA4 kvcache wrapper."""
    if targets <= SGL_FA4_KVCACHE:
        return True
    ver = args["ver"]
    return targets <= (DISPATCH_KVCACHE | SGL_KERNEL_KVCACHE) and ver.state == PRESENT and ver.value == 4


class _Fa4KvcacheRefuses(Rule):
    """Base: FA4's kvcache wrapper raises when any of ARGS is not None."""

    ARGS: tuple[str, ...] = ()
    TARGETS = _KVCACHE_ANY
    PREFILTER = last_names(_KVCACHE_ANY)

    def check(self, site, targets, args, ctx):
        if not on_fa4_kvcache_path(targets, args):
            return
        given = [a for a in self.ARGS if args[a].state == PRESENT]
        if given:
            yield self.report(args[given[0]].node, hint=self.HINT.format(args=", ".join(given)))


@register
class Fa4KvcacheInplaceUpdate(_Fa4KvcacheRefuses):
    """SGLang's FA4 `flash_attn_with_kvcache` cannot append new keys/values to the cache (`k=`/`v=`),
    unlike FA2/FA3, where passing them updates the cache in place."""

    CODE = "EKB101"
    NAME = "fa4-kvcache-inplace-update"
    RECORDS = ("sglang-fa4-kvcache-no-inplace-kv-update",)
    ARGS = ("k", "v")
    HINT = "write {args} into the cache first (e.g. set_kv_buffer), then call without k/v"
    VALID = [
        _IMPORT + "out = flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lens)",
        _DISPATCH_IMPORT + "out = flash_attn_with_kvcache(q, kc, vc, k=k_new, v=v_new)  # ver=3: FA3 updates in place",
        _IMPORT + "out = flash_attn_with_kvcache(q, kc, vc, k=None, v=None)",
        # a local function that shares the name is not SGLang's
        "def flash_attn_with_kvcache(*a, **k):\n    pass\nflash_attn_with_kvcache(q, kc, vc, k=k_new)",
        # forwarding an Optional parameter: only the caller knows
        _IMPORT + "def fwd(q, kc, vc, k=None, v=None):\n    return flash_attn_with_kvcache(q, kc, vc, k=k, v=v)",
    ]
    INVALID = [
        Example(_IMPORT + "out = flash_attn_with_kvcache(q, k_cache, v_cache, k=k_new, v=v_new)"),
        Example(_DISPATCH_IMPORT + "FA_VER = 4\nout = flash_attn_with_kvcache(q, kc, vc, k_new, v_new, ver=FA_VER)"),
        Example("import sglang.kernels.ops.attention.flash_attention_v4 as fa4\n"
                "kw = dict(cache_seqlens=lens)\nkw['v'] = v_new\nfa4.flash_attn_with_kvcache(q, kc, vc, **kw)"),
        Example("class Layer:\n    def __init__(self):\n"
                "        from sglang.kernels.ops.attention.flash_attention_v4 import flash_attn_with_kvcache\n"
                "        self.attn = flash_attn_with_kvcache\n"
                "    def forward(self, q, kc, vc, kn):\n        return self.attn(q, kc, vc, k=kn)"),
        Example("from sgl_kernel.flash_attn import flash_attn_with_kvcache\n"
                "flash_attn_with_kvcache(q, kc, vc, k=kn, v=vn, ver=4)"),
    ]


@register
class Fa4KvcacheRotary(_Fa4KvcacheRefuses):
    """SGLang's FA4 `flash_attn_with_kvcache` has no fused rotary embedding: rotary_cos,
    rotary_sin and rotary_seqlens must all be None."""

    CODE = "EKB102"
    NAME = "fa4-kvcache-rotary"
    RECORDS = ("sglang-fa4-kvcache-no-rotary",)
    ARGS = ("rotary_cos", "rotary_sin", "rotary_seqlens")
    HINT = "apply RoPE to q/k before the call and drop {args}"
    VALID = [
        _IMPORT + "flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens)",
        _DISPATCH_IMPORT + "flash_attn_with_kvcache(q, kc, vc, rotary_cos=cos, rotary_sin=sin, ver=3)",
        _DISPATCH_IMPORT + "def f(ver):\n    flash_attn_with_kvcache(q, kc, vc, rotary_cos=cos, ver=ver)",
        # triage (Fixit's finding in SGLang 0.5.23's own dispatcher): forwarding Optional parameters
        "def flash_attn_with_kvcache(q, kc, vc, rotary_cos=None, rotary_sin=None, ver=3):\n"
        "    if ver == 4:\n        from sglang.kernels.ops.attention.flash_attention_v4 import flash_attn_with_kvcache as fa4\n"
        "        return fa4(q, kc, vc, rotary_cos=rotary_cos, rotary_sin=rotary_sin)",
    ]
    INVALID = [
        Example(_IMPORT + "flash_attn_with_kvcache(q, kc, vc, rotary_cos=cos, rotary_sin=sin)"),
        Example(_DISPATCH_IMPORT + "kw = {'rotary_cos': cos, 'rotary_sin': sin, 'ver': 4}\n"
                "flash_attn_with_kvcache(q, kc, vc, **kw)"),
    ]


@register
class Fa4KvcacheBatchIdxLeftpad(_Fa4KvcacheRefuses):
    """SGLang's FA4 `flash_attn_with_kvcache` reads the cache rows in batch order from position 0:
    cache_batch_idx and cache_leftpad must be None."""

    CODE = "EKB103"
    NAME = "fa4-kvcache-batch-idx-leftpad"
    RECORDS = ("sglang-fa4-kvcache-batch-idx-leftpad",)
    ARGS = ("cache_batch_idx", "cache_leftpad")
    HINT = "gather the cache rows (or use a page_table) instead of {args}"
    VALID = [
        _IMPORT + "flash_attn_with_kvcache(q, kc, vc, page_table=pt, cache_seqlens=lens)",
        _DISPATCH_IMPORT + "flash_attn_with_kvcache(q, kc, vc, cache_batch_idx=idx)",
    ]
    INVALID = [
        Example(_IMPORT + "flash_attn_with_kvcache(q, kc, vc, cache_batch_idx=idx)"),
        Example("from sglang.kernels.ops.attention import flash_attention_v4_sm120 as fa\n"
                "fa.flash_attn_with_kvcache(q, kc, vc, cache_leftpad=pad)"),
    ]


@register
class SglKernelFa4Descale(_Fa4KvcacheRefuses):
    """sgl-kernel 0.3.21's `flash_attn_with_kvcache(..., ver=4)` asserts that no FP8 descale
    tensors are passed."""

    CODE = "EKB104"
    NAME = "sgl-kernel-fa4-descale"
    RECORDS = ("sglang-sgl-kernel-fa4-no-descale",)
    ARGS = ("q_descale", "k_descale", "v_descale")
    TARGETS = SGL_KERNEL_KVCACHE
    PREFILTER = last_names(SGL_KERNEL_KVCACHE)
    HINT = "dequantize before the call or use ver=3 (FA3) for FP8 KV; drop {args}"
    VALID = ["from sgl_kernel.flash_attn import flash_attn_with_kvcache\n"
             "flash_attn_with_kvcache(q, kc, vc, k_descale=ks, v_descale=vs)"]
    INVALID = [Example("from sgl_kernel.flash_attn import flash_attn_with_kvcache\n"
                       "flash_attn_with_kvcache(q, kc, vc, k_descale=ks, v_descale=vs, ver=4)")]


@register
class DispatchMaskModRequiresFa4(Rule):
    """SGLang's dispatcher refuses `mask_mod` unless `ver=4` (its default is ver=3)."""

    CODE = "EKB110"
    NAME = "dispatch-mask-mod-requires-fa4"
    RECORDS = ("sglang-fa-dispatch-mask-mod-requires-fa4",)
    TARGETS = DISPATCH
    PREFILTER = last_names(DISPATCH)
    HINT = "pass ver=4 (FA4) with mask_mod, or drop mask_mod on the FA3 path"
    FIXES = {"sglang-fa-dispatch-mask-mod-requires-fa4": 1}
    VALID = [
        _DISPATCH_IMPORT + "flash_attn_with_kvcache(q, kc, vc, mask_mod=mm, ver=4)",
        _DISPATCH_IMPORT + "def f(v):\n    flash_attn_with_kvcache(q, kc, vc, mask_mod=mm, ver=v)",
        _DISPATCH_IMPORT + "from .cfg import FA_VER\nflash_attn_with_kvcache(q, kc, vc, mask_mod=mm, ver=FA_VER)",
    ]
    INVALID = [
        Example(_DISPATCH_IMPORT + "flash_attn_with_kvcache(q, kc, vc, mask_mod=mm)",
                fixed=_DISPATCH_IMPORT + "flash_attn_with_kvcache(q, kc, vc, mask_mod=mm, ver=4)"),
        Example("from sglang.kernels.ops.attention.flash_attention import flash_attn_varlen_func as fa\n"
                "def f(q, k, v, cq, ck):\n    from x import mm\n    return fa(q, k, v, cq, ck, mask_mod=mm, ver=3)",
                fixed="from sglang.kernels.ops.attention.flash_attention import flash_attn_varlen_func as fa\n"
                "def f(q, k, v, cq, ck):\n    from x import mm\n    return fa(q, k, v, cq, ck, mask_mod=mm, ver=4)"),
    ]

    def check(self, site, targets, args, ctx):
        mm, ver = args["mask_mod"], args["ver"]
        ver_value = 3 if ver.state == ABSENT else literal(ver)
        if mm.state == PRESENT and ver_value is not UNKNOWN and ver_value != 4:
            yield self.report(mm.node, fix=self._fa4(site, args))

    @staticmethod
    def _fa4(site, args) -> RuleFix | None:
        """ver=4. Unsafe: FA4's kernels (Hopper/Blackwell only) replace FA3's for this call."""
        given = passed_here(args, "ver")
        if given is not None:
            edit = replace(given.value, "4")
        elif args["ver"].state == ABSENT:
            edit = add_keyword(site.node, "ver", "4")
        else:
            return None
        return RuleFix("Run this call on FA4 (ver=4)", False, (edit,))


@register
class DispatchUnknownVersion(Rule):
    """SGLang's dispatcher knows only ver=3 and ver=4; FlashAttentionBackend only fa_impl_ver 3/4."""

    CODE = "EKB111"
    NAME = "dispatch-unknown-version"
    RECORDS = ("sglang-fa-dispatch-unknown-version",)
    _BACKENDS = frozenset({
        "sglang.srt.layers.attention.flashattention_backend.FlashAttentionBackend",
        "sglang.srt.layers.attention.flashattention_backend.FlashAttentionMultiStepBackend"})
    TARGETS = DISPATCH | _BACKENDS
    PREFILTER = last_names(DISPATCH | _BACKENDS)
    HINT = "use ver=3 (FA3) or ver=4 (FA4); FA2 is not reachable through this dispatcher"
    FIXES = {"sglang-fa-dispatch-unknown-version": 1}
    VALID = [
        _DISPATCH_IMPORT + "flash_attn_with_kvcache(q, kc, vc, ver=4)",
        _DISPATCH_IMPORT + "flash_attn_with_kvcache(q, kc, vc)",
        # triage (SGLang 0.5.23 multimodal_gen): a version imported from another module is unknown here
        _DISPATCH_IMPORT + "from .flash_attn import fa_ver\nflash_attn_with_kvcache(q, kc, vc, ver=fa_ver)",
    ]
    INVALID = [
        Example(_DISPATCH_IMPORT + "flash_attn_with_kvcache(q, kc, vc, ver=2)"),
        Example(_DISPATCH_IMPORT + "flash_attn_with_kvcache(q, kc, vc, ver='4')",
                fixed=_DISPATCH_IMPORT + "flash_attn_with_kvcache(q, kc, vc, ver=4)"),
        Example(_DISPATCH_IMPORT + "FA = '3'\nflash_attn_with_kvcache(q, kc, vc, ver=FA)",
                fixed=_DISPATCH_IMPORT + "FA = '3'\nflash_attn_with_kvcache(q, kc, vc, ver=int(FA))"),
    ]

    def check(self, site, targets, args, ctx):
        name = "fa_impl_ver" if targets <= self._BACKENDS else "ver"
        ver = args[name]
        value = literal(ver)
        if ver.state == PRESENT and value is not UNKNOWN and (type(value) is not int or value not in (3, 4)):
            yield self.report(ver.node, ver=repr(value) if isinstance(value, str) else value,
                              fix=self._as_int(args, name, value))

    @staticmethod
    def _as_int(args, name: str, value) -> RuleFix | None:
        """'3' / '4' (a string) becomes the int it spells: the same version, as the dispatcher wants it."""
        arg = passed_here(args, name)
        if arg is None or value not in ("3", "4"):
            return None
        is_literal = isinstance(arg.value, cst.SimpleString)
        return RuleFix(f"Pass {name} as the int {value}", True,
                       (replace(arg.value, value if is_literal else f"int({code(arg.value)})"),))


@register
class Fa4OnlyArgsOnFa3Path(Rule):
    """On the dispatcher's FA3 path (`ver=3`, the default) `score_mod`, `rel_bias` and their aux
    arguments are silently dropped; SGLang's attention backend raises for the same request."""

    CODE = "EKB112"
    NAME = "fa4-only-args-on-fa3-path"
    RECORDS = ("sglang-fa-backend-score-mod-requires-fa4", "sglang-fa-backend-rel-bias-requires-fa4")
    TARGETS = DISPATCH
    PREFILTER = last_names(DISPATCH)
    HINT = "these arguments only take effect with ver=4; on ver=3 they are silently ignored"
    VALID = [_DISPATCH_IMPORT + "flash_attn_with_kvcache(q, kc, vc, score_mod=sm, ver=4)"]
    INVALID = [
        Example(_DISPATCH_IMPORT + "flash_attn_with_kvcache(q, kc, vc, score_mod=sm)"),
        Example(_DISPATCH_IMPORT + "flash_attn_with_kvcache(q, kc, vc, rel_bias=b, ver=3)"),
    ]

    def check(self, site, targets, args, ctx):
        ver = args["ver"]
        ver_value = 3 if ver.state == ABSENT else literal(ver)
        if ver_value != 3:
            return
        if args["score_mod"].state == PRESENT:
            yield self.report(args["score_mod"].node, record=self.RECORDS[0])
        elif args["rel_bias"].state == PRESENT:
            yield self.report(args["rel_bias"].node, record=self.RECORDS[1])
