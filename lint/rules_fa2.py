"""FlashAttention 2 (flash-attn 2.8.x, `flash_attn` / `flash_attn.flash_attn_interface`): argument
combinations its C++ API refuses."""

from __future__ import annotations

from errkb.lint.analysis import PRESENT, literal
from errkb.lint.edits import RuleFix, code, drop_arg, passed_here, replace, simple
from errkb.lint.rule import Example, Rule, register
from errkb.lint.targets import last_names

_MODS = ("flash_attn", "flash_attn.flash_attn_interface")
FA2_KVCACHE = frozenset(f"{m}.flash_attn_with_kvcache" for m in _MODS)
FA2_DENSE = frozenset(f"{m}.{fn}" for m in _MODS for fn in ("flash_attn_func", "flash_attn_varlen_func"))

_KV = "from flash_attn import flash_attn_with_kvcache\n"


class _Fa2KvcacheBoth(Rule):
    """Base: flash_attn_with_kvcache refuses FIRST together with SECOND."""

    TARGETS = FA2_KVCACHE
    PREFILTER = last_names(FA2_KVCACHE)
    FIRST = SECOND = ""

    def check(self, site, targets, args, ctx):
        if args[self.FIRST].state == PRESENT and args[self.SECOND].state == PRESENT:
            yield self.report(args[self.SECOND].node, fix=self.autofix(site, args))

    def autofix(self, site, args) -> RuleFix | None:
        return None


@register
class Fa2PagedKvWithLeftpad(_Fa2KvcacheBoth):
    """FA2's kvcache kernel cannot combine a paged cache (block_table) with cache_leftpad."""

    CODE = "EKB501"
    NAME = "fa2-paged-kv-with-leftpad"
    RECORDS = ("fa2-paged-kv-with-leftpad",)
    FIRST, SECOND = "block_table", "cache_leftpad"
    HINT = "drop cache_leftpad (shift the pages instead) or use a contiguous cache"
    FIXES = {"fa2-paged-kv-with-leftpad": 1}
    VALID = [_KV + "flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, block_table=bt)"]
    INVALID = [Example(_KV + "flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, cache_leftpad=pad, block_table=bt)",
                       fixed=_KV + "flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, block_table=bt)")]

    def autofix(self, site, args):
        """Unsafe: the sequences then start at cache position 0, not after their padding."""
        arg = passed_here(args, "cache_leftpad")
        if arg is not None:
            return RuleFix("Drop cache_leftpad", False, (drop_arg(site.node, arg),))
        return None


@register
class Fa2PagedKvWithBatchIdx(_Fa2KvcacheBoth):
    """FA2's kvcache kernel cannot combine a paged cache (block_table) with cache_batch_idx."""

    CODE = "EKB502"
    NAME = "fa2-paged-kv-with-batch-idx"
    RECORDS = ("fa2-paged-kvcache-cache-batch-idx",)
    FIRST, SECOND = "block_table", "cache_batch_idx"
    HINT = "select the sequences through block_table rows instead of cache_batch_idx"
    FIXES = {"fa2-paged-kvcache-cache-batch-idx": 1}
    VALID = [_KV + "flash_attn_with_kvcache(q, kc, vc, cache_batch_idx=idx)"]
    INVALID = [Example("import flash_attn\nflash_attn.flash_attn_with_kvcache(q, kc, vc, None, None, None, None, "
                       "lens, idx, None, bt)",
                       fixed="import flash_attn\nflash_attn.flash_attn_with_kvcache(q, kc, vc, None, None, None, None, "
                       "lens, None, None, bt[idx])"),
               Example(_KV + "out = flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, block_table=pages.table,\n"
                       "                              cache_batch_idx=slots)",
                       fixed=_KV + "out = flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, block_table=pages.table[slots])")]

    def autofix(self, site, args):
        """Unsafe: assumes cache_batch_idx was meant to pick block_table rows (the record's fix)."""
        idx, table = passed_here(args, "cache_batch_idx"), passed_here(args, "block_table")
        if idx is None or table is None or not simple(idx.value):
            return None
        rows = code(table.value) if simple(table.value) else f"({code(table.value)})"
        return RuleFix("Index block_table with cache_batch_idx and drop it", False,
                       (replace(table.value, f"{rows}[{code(idx.value)}]"), drop_arg(site.node, idx)))


@register
class Fa2KvcacheRotaryNeedsNewKv(Rule):
    """FA2 applies rotary embedding to the new keys it appends: rotary_cos/rotary_sin without
    k/v are refused."""

    CODE = "EKB503"
    NAME = "fa2-kvcache-rotary-needs-new-kv"
    RECORDS = ("fa2-kvcache-rotary-needs-new-kv",)
    TARGETS = FA2_KVCACHE
    PREFILTER = last_names(FA2_KVCACHE)
    HINT = "pass the new k and v with rotary_cos/rotary_sin, or rotate q yourself and drop them"
    VALID = [_KV + "flash_attn_with_kvcache(q, kc, vc, k=kn, v=vn, rotary_cos=cos, rotary_sin=sin)",
             _KV + "def f(q, kc, vc, k=None, v=None):\n    flash_attn_with_kvcache(q, kc, vc, k=k, v=v, rotary_cos=cos)"]
    INVALID = [Example(_KV + "flash_attn_with_kvcache(q, kc, vc, rotary_cos=cos, rotary_sin=sin, cache_seqlens=lens)")]

    def check(self, site, targets, args, ctx):
        if args["rotary_cos"].state == PRESENT and args["k"].state == "absent":
            yield self.report(args["rotary_cos"].node)


@register
class Fa2SoftcapWithDropout(Rule):
    """FA2 has no dropout in its soft-capping kernels: softcap > 0 with dropout_p > 0 is refused."""

    CODE = "EKB504"
    NAME = "fa2-softcap-with-dropout"
    RECORDS = ("fa2-softcap-with-dropout",)
    TARGETS = FA2_DENSE
    PREFILTER = last_names(FA2_DENSE)
    HINT = "train with dropout_p=0.0 when softcap is on (or drop the soft-cap)"
    FIXES = {"fa2-softcap-with-dropout": 1}
    VALID = ["from flash_attn import flash_attn_func\nflash_attn_func(q, k, v, dropout_p=0.0, softcap=30.0)",
             "from flash_attn import flash_attn_func\nflash_attn_func(q, k, v, 0.1)"]
    INVALID = [Example("from flash_attn import flash_attn_func\nflash_attn_func(q, k, v, 0.1, softcap=50.0)",
                       fixed="from flash_attn import flash_attn_func\nflash_attn_func(q, k, v, 0.0, softcap=50.0)"),
               Example("from flash_attn.flash_attn_interface import flash_attn_varlen_func\n"
                       "P = 0.1\nflash_attn_varlen_func(q, k, v, cq, ck, mq, mk, dropout_p=P, softcap=30.0)",
                       fixed="from flash_attn.flash_attn_interface import flash_attn_varlen_func\n"
                       "P = 0.1\nflash_attn_varlen_func(q, k, v, cq, ck, mq, mk, dropout_p=0.0, softcap=30.0)")]

    def check(self, site, targets, args, ctx):
        cap, p = literal(args["softcap"]), literal(args["dropout_p"])
        if isinstance(cap, (int, float)) and cap > 0 and isinstance(p, (int, float)) and p > 0:
            dropout = passed_here(args, "dropout_p")
            # unsafe: training loses attention dropout
            fix = dropout and RuleFix("Turn attention dropout off (dropout_p=0.0)", False,
                                      (replace(dropout.value, "0.0"),))
            yield self.report(args["softcap"].node, fix=fix)
