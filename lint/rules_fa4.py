"""FlashAttention 4 (CuTe DSL) forward checks, reached from flash_attn.cute, SGLang's vendored copy,
SGLang's flash_attention_v4 wrappers and its dispatcher with ver=4."""

from __future__ import annotations

from dataclasses import dataclass

from errkb.lint.analysis import ABSENT, PRESENT, Arg, TensorFacts, tensor_facts
from errkb.lint.choices import version_key
from errkb.lint.edits import RuleFix, code, passed_here, replace, simple
from errkb.lint.launch import target_version
from errkb.lint.rule import Example, Rule, arch_major, register
from errkb.lint.targets import (DISPATCH, DISPATCH_KVCACHE, FA4_UPSTREAM, FA4_VENDORED,
                                SGL_FA4_VARLEN, last_names)

_SGL_V4_KVCACHE = frozenset({"sglang.kernels.ops.attention.flash_attention_v4.flash_attn_with_kvcache"})
FA4_ENTRY = FA4_UPSTREAM | FA4_VENDORED | SGL_FA4_VARLEN | _SGL_V4_KVCACHE | DISPATCH
FP8 = frozenset({"torch.float8_e4m3fn", "torch.float8_e5m2"})

_UP = "from flash_attn.cute import flash_attn_varlen_func\n"
_UP_FUNC = "from flash_attn.cute import flash_attn_func\n"
_SGL = "from sglang.kernels.ops.attention.flash_attn.cute import flash_attn_varlen_func\n"


@dataclass
class Fa4Call:
    flavour: str  # "upstream" (flash-attn-4) or "sglang" (the vendored copy)
    kvcache: bool
    args: object

    def __getitem__(self, name: str) -> Arg:
        if self.kvcache and name in ("k", "v"):
            name += "_cache"
        if self.kvcache and name == "cu_seqlens_k":
            return Arg(ABSENT)
        return self.args[name]

    def tensor(self, name: str, index) -> TensorFacts:
        if self.kvcache and name in ("k", "v"):
            name += "_cache"
        got = self.args.expr(name)
        return tensor_facts(index, got[0], got[1]) if got else TensorFacts()


def fa4_call(targets, args) -> Fa4Call | None:
    """How a call reaches FA4's forward, or None when it does not (certainly)."""
    if targets <= FA4_UPSTREAM:
        return Fa4Call("upstream", False, args)
    if targets <= FA4_VENDORED | SGL_FA4_VARLEN:
        return Fa4Call("sglang", False, args)
    if targets <= _SGL_V4_KVCACHE:
        return Fa4Call("sglang", True, args)
    if targets <= DISPATCH:
        ver = args["ver"]
        if ver.state == PRESENT and ver.value == 4:
            return Fa4Call("sglang", targets <= DISPATCH_KVCACHE, args)
    return None


class _Fa4Rule(Rule):
    TARGETS = FA4_ENTRY
    PREFILTER = last_names(FA4_ENTRY)

    def check(self, site, targets, args, ctx):
        call = fa4_call(targets, args)
        if call is not None:
            yield from self.check_fa4(call, site, ctx)

    def check_fa4(self, call: Fa4Call, site, ctx):
        return ()

    @staticmethod
    def archs_where(ctx, keep) -> list[str]:
        """The target GPUs (--arch) whose major compute capability `keep` accepts."""
        return [a for a in ctx.archs if keep(arch_major(a))]

    def report_on(self, node, archs: list[str], **kw):
        """A finding whose hint names the target GPUs it applies to."""
        return self.report(node, hint=self.HINT.format(archs=", ".join(archs)), **kw)


@register
class Fa4SplitKvArch(_Fa4Rule):
    """num_splits > 1 (split-KV) exists only in FA4's Blackwell (10.x/11.x) forward: flash-attn-4
    asserts on 8.x, 9.x and 12.x; SGLang's vendored copy splits on 9.x but not on 8.x."""

    CODE = "EKB201"
    NAME = "fa4-splitkv-arch"
    RECORDS = ("fa4-splitkv-sm90", "fa4-sm120-num-splits", "fa4-sm8x-paged-kv-splitkv")
    ARCH_DEPENDENT = True
    HINT = "pass num_splits=1 on {archs} (split-KV only runs on SM100/SM110)"
    FIXES = {"fa4-splitkv-sm90": 1}
    VALID = [
        _UP + "flash_attn_varlen_func(q, k, v, num_splits=1)",
        Example(_UP + "flash_attn_varlen_func(q, k, v, num_splits=4)", archs=("sm100",)),
        Example(_SGL + "flash_attn_varlen_func(q, k, v, num_splits=4)", archs=("sm90", "sm100")),
    ]
    INVALID = [
        Example(_UP + "flash_attn_varlen_func(q, k, v, num_splits=4)", archs=("sm90",),
                fixed=_UP + "flash_attn_varlen_func(q, k, v, num_splits=1)"),
        Example(_UP + "SPLITS = 2\nflash_attn_varlen_func(q, k, v, num_splits=SPLITS)", archs=("sm90", "sm100"),
                fixed=_UP + "SPLITS = 2\nflash_attn_varlen_func(q, k, v, num_splits=1)"),
        Example(_UP + "SPLITS = 2\nflash_attn_varlen_func(q, k, v, num_splits=SPLITS)", archs=("sm120",)),
        Example(_SGL + "flash_attn_varlen_func(q, k, v, num_splits=4)", archs=("sm80",)),
    ]
    _TEXT = {8: "SplitKV not supported on SM 8.0", 9: "SplitKV not supported on SM 9.0",
             12: "SM120 forward only supports num_splits=1"}
    # from 4.0.0b39 flash-attn-4 refuses it in config.py with a ValueError and this wording (b40 read)
    _TEXT_B39 = "SM{major} forward does not support SM100-only options: num_splits={n} (needs 1)"
    _RECORD = {8: "fa4-sm8x-paged-kv-splitkv", 9: "fa4-splitkv-sm90", 12: "fa4-sm120-num-splits"}

    def check_fa4(self, call, site, ctx):
        ns = call["num_splits"]
        if ns.state != PRESENT or type(ns.value) is not int or ns.value <= 1:
            return
        failing = (8,) if call.flavour == "sglang" else (8, 9, 12)
        archs = self.archs_where(ctx, lambda major: major in failing)
        if archs:
            major = arch_major(archs[0])
            yield self.report_on(ns.node, archs, record=self._RECORD[major], text=self._text(major, ns.value, call, ctx),
                                 fix=self._one_split(call, ctx))

    def _text(self, major: int, splits: int, call, ctx) -> str:
        """Upstream's message for the target flash-attn-4 release (b36's wording when none is known)."""
        version = target_version(ctx, "flash-attn-4") if call.flavour == "upstream" else None
        if major in (8, 9) and version and version_key(version) >= version_key("4.0.0b39"):
            return self._TEXT_B39.format(major=major, n=splits)
        return self._TEXT[major]

    def _one_split(self, call, ctx) -> RuleFix | None:
        """num_splits=1: the same attention, unsplit. Unsafe when a target GPU could split (it
        then loses split-KV's speed); the record's fix chooses 1 by the device at run time."""
        arg = passed_here(call.args, "num_splits")
        if arg is None:
            return None
        blackwell = bool(self.archs_where(ctx, lambda major: major in (10, 11)))
        return RuleFix("Pass num_splits=1", not blackwell, (replace(arg.value, "1"),))


@register
class Fa4PagedKvSm8x(_Fa4Rule):
    """FA4's SM80 forward has no paged KV: page_table must be None on 8.x GPUs."""

    CODE = "EKB208"
    NAME = "fa4-paged-kv-sm8x"
    RECORDS = ("fa4-sm8x-paged-kv-splitkv",)
    ARCH_DEPENDENT = True
    HINT = "on {archs} use FA2 (flash_attn_with_kvcache with block_table) or FlashInfer for paged KV"
    VALID = [Example(_UP + "flash_attn_varlen_func(q, k, v, page_table=pt, seqused_k=lens)", archs=("sm90",))]
    INVALID = [Example(_UP + "flash_attn_varlen_func(q, k, v, page_table=pt, seqused_k=lens)", archs=("sm86",))]

    def check_fa4(self, call, site, ctx):
        pt = call["page_table"]
        archs = self.archs_where(ctx, lambda major: major == 8)
        if pt.state == PRESENT and archs:
            yield self.report_on(pt.node, archs)


@register
class Fa4SoftcapWithScoreMod(_Fa4Rule):
    """FA4 implements softcap as a score_mod of its own, so a nonzero softcap and a custom
    score_mod cannot be combined."""

    CODE = "EKB202"
    NAME = "fa4-softcap-with-score-mod"
    RECORDS = ("fa4-softcap-with-score-mod",)
    HINT = "fold the tanh soft-cap into your score_mod and pass softcap=0.0"
    VALID = [
        _UP_FUNC + "flash_attn_func(q, k, v, softcap=0.0, score_mod=sm)",
        _UP_FUNC + "flash_attn_func(q, k, v, softcap=30.0)",
    ]
    INVALID = [
        Example(_UP_FUNC + "flash_attn_func(q, k, v, softcap=30.0, score_mod=sm)"),
        Example("from sglang.kernels.ops.attention.flash_attention import flash_attn_with_kvcache\n"
                "CAP = 50.0\nflash_attn_with_kvcache(q, kc, vc, softcap=CAP, score_mod=sm, ver=4)"),
    ]

    def check_fa4(self, call, site, ctx):
        cap, sm = call["softcap"], call["score_mod"]
        if (cap.state == PRESENT and isinstance(cap.value, (int, float)) and cap.value != 0
                and sm.state == PRESENT):
            yield self.report(sm.node)


@register
class Fa4PageTableWithCuSeqlensK(_Fa4Rule):
    """With a page_table FA4 reads key lengths from seqused_k; cu_seqlens_k must be None."""

    CODE = "EKB203"
    NAME = "fa4-page-table-with-cu-seqlens-k"
    RECORDS = ("fa4-page-table-with-cu-seqlens-k",)
    HINT = "pass per-sequence lengths as seqused_k instead of cu_seqlens_k"
    FIXES = {"fa4-page-table-with-cu-seqlens-k": 1}
    VALID = [_UP + "flash_attn_varlen_func(q, kc, vc, cu_seqlens_q=cq, seqused_k=lens, page_table=pt)"]
    INVALID = [
        Example(_UP + "flash_attn_varlen_func(q, kc, vc, cu_seqlens_q=cq, cu_seqlens_k=ck, page_table=pt)",
                fixed=_UP + "flash_attn_varlen_func(q, kc, vc, cu_seqlens_q=cq, seqused_k=(ck[1:] - ck[:-1]).int(), "
                "page_table=pt)"),
        Example(_SGL + "flash_attn_varlen_func(q, kc, vc, None, cq, ck, page_table=pt)"),
    ]

    def check_fa4(self, call, site, ctx):
        pt, ck = call["page_table"], call["cu_seqlens_k"]
        if pt.state == PRESENT and ck.state == PRESENT:
            yield self.report(ck.node, fix=self._lengths(call))

    @staticmethod
    def _lengths(call) -> RuleFix | None:
        """seqused_k = the differences of cu_seqlens_k, as int32 (the record's fix, inline)."""
        arg = passed_here(call.args, "cu_seqlens_k")
        if arg is None or arg.keyword is None or not simple(arg.value) or call["seqused_k"].state != ABSENT:
            return None
        ck = code(arg.value)
        return RuleFix("Pass seqused_k (lengths from cu_seqlens_k) instead", True,
                       (replace(arg, f"seqused_k=({ck}[1:] - {ck}[:-1]).int()"),))


@register
class Fa4QvRequiresBlackwell(_Fa4Rule):
    """FA4's qv (MLA absorbed) path runs only on Blackwell datacenter GPUs (10.x/11.x)."""

    CODE = "EKB204"
    NAME = "fa4-qv-requires-blackwell"
    RECORDS = ("fa4-qv-requires-blackwell",)
    ARCH_DEPENDENT = True
    HINT = "on {archs} use an MLA backend for that GPU (FA3/FlashMLA/FlashInfer) instead of FA4 qv"
    VALID = [Example(_UP + "flash_attn_varlen_func(q, kc, vc, qv=qv)", archs=("sm100",))]
    INVALID = [Example(_UP + "flash_attn_varlen_func(q, kc, vc, qv=qv)", archs=("sm90", "sm100"))]

    def check_fa4(self, call, site, ctx):
        qv = call["qv"]
        archs = self.archs_where(ctx, lambda major: major not in (10, 11))
        if qv.state == PRESENT and archs:
            yield self.report_on(qv.node, archs)


@register
class Fa4Fp8OnlySm100(_Fa4Rule):
    """FA4 runs FP8 (float8_e4m3fn/e5m2) inputs only on compute capability 10.x; the rule fires
    when the dtype of v is visible in the module."""

    CODE = "EKB205"
    NAME = "fa4-fp8-only-sm100"
    RECORDS = ("fa4-fp8-only-sm100",)
    ARCH_DEPENDENT = True
    HINT = "on {archs} keep q/k/v in bf16/fp16 (dequantize the FP8 cache first)"
    VALID = [
        Example(_UP_FUNC + "import torch\nv = torch.randn(2, 128, 8, 128, dtype=torch.float8_e4m3fn)\n"
                "flash_attn_func(q, k, v)", archs=("sm100",)),
        _UP_FUNC + "import torch\nv = torch.randn(2, 128, 8, 128, dtype=torch.bfloat16)\nflash_attn_func(q, k, v)",
    ]
    INVALID = [
        Example(_UP_FUNC + "import torch\nv = torch.randn(2, 128, 8, 128, device='cuda').to(torch.float8_e4m3fn)\n"
                "flash_attn_func(q, k, v)", archs=("sm90",)),
    ]

    def check_fa4(self, call, site, ctx):
        facts = call.tensor("v", ctx.index)
        archs = self.archs_where(ctx, lambda major: major != 10)
        if facts.dtype in FP8 and archs:
            yield self.report_on(call.args.given[("v_cache" if call.kvcache else "v")][2], archs)


def head_dims_ok(hd: int, hd_v: int, major: int, alignment: int, flavour: str) -> bool:
    """FA4's _validate_head_dims (flash-attn-4 4.0.0b36; SGLang 0.5.23's copy also takes (512, 512) on 9.x)."""
    aligned = hd % alignment == 0 and hd_v % alignment == 0
    if major == 9:
        ok = 8 <= hd <= 256 and 8 <= hd_v <= 256
        if flavour == "sglang":
            ok = ok or hd == hd_v == 512
        return ok and aligned
    if major in (10, 11):
        return ((8 <= hd <= 128 and 8 <= hd_v <= 128) or (hd, hd_v) == (192, 128)
                or ((hd == 64 or hd == hd_v) and hd_v == 512) or (hd, hd_v) == (256, 256)) and aligned
    return True  # 8.x and 12.x are not validated here


@register
class Fa4HeadDim(_Fa4Rule):
    """FA4 accepts head dims 8..256 on 9.x and 8..128, (192, 128), (256, 256) or the MLA 512
    shapes on 10.x/11.x, all multiples of 8 (16 for FP8); fires when the dims are literal in the
    module (tensors made with torch.randn/empty/zeros/ones/full)."""

    CODE = "EKB206"
    NAME = "fa4-head-dim"
    RECORDS = ("fa4-head-dim-sm90", "fa4-head-dim-sm100")
    ARCH_DEPENDENT = True
    HINT = "pad the head dim to a supported size or use another backend on {archs}"
    _Q = "import torch\nq = torch.randn(2, 128, 8, {d}, dtype=torch.bfloat16)\nk = v = torch.randn(2, 128, 8, {d})\n"
    VALID = [
        _UP_FUNC + _Q.format(d=128) + "flash_attn_func(q, k, v)",
        Example(_UP_FUNC + _Q.format(d=256) + "flash_attn_func(q, k, v)", archs=("sm90", "sm100")),
        Example(_UP_FUNC + _Q.format(d=200) + "flash_attn_func(q, k, v)", archs=("sm80", "sm120")),
    ]
    INVALID = [
        Example(_UP_FUNC + _Q.format(d=512) + "flash_attn_func(q, k, v)", archs=("sm90",)),
        Example(_UP_FUNC + _Q.format(d=192) + "flash_attn_func(q, k, v)", archs=("sm100",)),
        Example(_UP_FUNC + _Q.format(d=160) + "flash_attn_func(q, k, v)", archs=("sm90", "sm100")),
    ]

    def check_fa4(self, call, site, ctx):
        if call["qv"].state != ABSENT:
            return
        q, v = call.tensor("q", ctx.index), call.tensor("v", ctx.index)
        if q.last_dim is None:
            return
        dtype = v.dtype or q.dtype
        alignment = 16 if dtype in FP8 else 8
        for arch in ctx.archs:
            major = arch_major(arch)
            candidates = [v.last_dim] if v.last_dim is not None else range(8, 520, 8)
            if all(not head_dims_ok(q.last_dim, hd_v, major, alignment, call.flavour) for hd_v in candidates):
                shown = v.last_dim if v.last_dim is not None else "head_dim_v"
                yield self.report(call.args.given["q"][2], record=self.RECORDS[0 if major == 9 else 1],
                                  hint=self.HINT.format(archs=arch), head_dim=q.last_dim, head_dim_v=shown,
                                  alignment=alignment)
                return


@register
class Fa4Sm90BlockSparsityBias(_Fa4Rule):
    """SGLang's vendored FA4 Hopper kernel cannot combine block sparsity with a sheared bias."""

    CODE = "EKB207"
    NAME = "fa4-sm90-block-sparsity-bias"
    RECORDS = ("sglang-fa4-sm90-block-sparsity-sheared-bias",)
    ARCH_DEPENDENT = True
    HINT = "drop block_sparse_tensors (or the bias) on {archs}"
    VALID = [Example(_SGL + "flash_attn_varlen_func(q, k, v, rel_bias=b, block_sparse_tensors=bs)", archs=("sm100",))]
    INVALID = [Example(_SGL + "flash_attn_varlen_func(q, k, v, rel_bias=b, block_sparse_tensors=bs)", archs=("sm90",))]

    def check_fa4(self, call, site, ctx):
        archs = self.archs_where(ctx, lambda major: major == 9)
        if (call.flavour == "sglang" and archs and call["rel_bias"].state == PRESENT
                and call["block_sparse_tensors"].state == PRESENT):
            yield self.report_on(call["block_sparse_tensors"].node, archs)
