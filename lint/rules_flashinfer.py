"""FlashInfer wrappers: run() before plan()."""

from __future__ import annotations

import libcst as cst

from errkb.lint.analysis import ModuleIndex, Scope, _Walker
from errkb.lint.rule import Example, Rule, register

# wrappers whose run() raises the recorded message when no plan is stored (flashinfer 0.7.4)
_WRAPPERS = {
    "BlockSparseAttentionWrapper": "flashinfer-run-before-plan",
    "VariableBlockSparseAttentionWrapper": "flashinfer-run-before-plan",
    "BatchPrefillWithCausalBidirectionalRangesWrapper": "flashinfer-run-before-plan",
    "BatchDecodeCuteDSLWrapper": "flashinfer-run-before-plan",
    "BatchDecodePagedCuteDSLWrapper": "flashinfer-run-before-plan",
    "BatchMLADecodeCuteDSLWrapper": "flashinfer-run-before-plan",
    "BatchPrefillTSWrapper": "flashinfer-run-before-plan",
    "BatchPrefillPagedTSWrapper": "flashinfer-run-before-plan",
    "BatchDecodePagedTSWrapper": "flashinfer-run-before-plan",
    "BatchMLADecodePagedTSWrapper": "flashinfer-run-before-plan",
    "BlockSparseTSWrapper": "flashinfer-run-before-plan",
    "BlockSparsePagedTSWrapper": "flashinfer-run-before-plan",
    "BatchMLAPagedAttentionWrapper": "flashinfer-mla-wrapper-run-before-plan",
}
# the exact words of each wrapper family, where they differ from the record's message
_TEXT = {
    "VariableBlockSparseAttentionWrapper": "Call plan() successfully before run()",
    "BatchDecodeCuteDSLWrapper": "Call plan() before run().",
    "BatchDecodePagedCuteDSLWrapper": "Call plan() before run().",
    "BatchMLADecodeCuteDSLWrapper": "Call plan() before run().",
    "BatchPrefillWithCausalBidirectionalRangesWrapper": "plan() must be called before run().",
}
_RUN = ("run", "forward")


class _Order(_Walker):
    """Walks one scope in source order, without entering nested functions or classes."""

    def __init__(self, rule: "FlashinferRunBeforePlan", index: ModuleIndex, scope: Scope) -> None:
        self.rule, self.index, self.scope = rule, index, scope
        self.pending: dict[str, str] = {}  # variable -> wrapper class name
        self.reports = []

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def leave_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        name = node.targets[0].target.value
        self.pending.pop(name, None)
        call = node.value
        if not isinstance(call, cst.Call):
            return
        targets = self.index.resolve(call.func, self.scope)
        if len(targets) != 1:
            return
        qual = next(iter(targets))
        cls = qual.rsplit(".", 1)[-1]
        if not qual.startswith("flashinfer.") or cls not in _WRAPPERS:
            return
        if cls == "BatchMLAPagedAttentionWrapper":
            backend = next((a.value for a in call.args if a.keyword and a.keyword.value == "backend"), None)
            if backend is not None and self.index.value(backend, self.scope) in ("cutlass",) or (
                    backend is not None and not isinstance(self.index.value(backend, self.scope), str)):
                return  # cutlass keeps an unplanned path; an unknown backend may be cutlass
        self.pending[name] = cls

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value in self.pending:
            cls = self.pending.pop(f.value.value)
            if f.attr.value in _RUN:
                self.reports.append(self.rule.report(node, record=_WRAPPERS[cls], text=_TEXT.get(cls)))

    def visit_Name(self, node: cst.Name) -> None:
        self.pending.pop(node.value, None)  # any other use (passed on, planned elsewhere) ends it


@register
class FlashinferRunBeforePlan(Rule):
    """A FlashInfer wrapper created in a function (or module) whose first use there is run()
    has no plan yet: run() raises until plan() has succeeded on that same instance."""

    CODE = "EKB401"
    NAME = "flashinfer-run-before-plan"
    RECORDS = ("flashinfer-run-before-plan", "flashinfer-mla-wrapper-run-before-plan")
    PREFILTER = tuple(sorted((c.encode(), b"flashinfer") for c in _WRAPPERS))
    HINT = "call plan(...) on this wrapper before run() (once per batch layout)"
    VALID = [
        "import flashinfer\ndef f(ws, q, kv):\n    w = flashinfer.BlockSparseAttentionWrapper(ws)\n"
        "    w.plan(indptr, indices, M, N, R, C, H, H, D)\n    return w.run(q, kv)",
        "from flashinfer import BlockSparseAttentionWrapper\ndef f(ws, q, kv):\n"
        "    w = BlockSparseAttentionWrapper(ws)\n    setup(w)\n    return w.run(q, kv)",
        "from flashinfer.mla import BatchMLAPagedAttentionWrapper\n"
        "w = BatchMLAPagedAttentionWrapper(ws, backend='cutlass')\nw.run(q_nope, q_pe, ckv, kpe)",
    ]
    INVALID = [
        Example("import flashinfer\ndef f(ws, q, kv):\n    w = flashinfer.BlockSparseAttentionWrapper(ws)\n"
                "    return w.run(q, kv)"),
        Example("from flashinfer.mla import BatchMLAPagedAttentionWrapper\n"
                "w = BatchMLAPagedAttentionWrapper(ws)\nout = w.run(q_nope, q_pe, ckv, kpe)"),
    ]

    def run(self, ctx):
        index = ctx.index
        if not any(_is_wrapper(index.targets(site)) for site in index.calls):
            return  # no wrapper is built here: nothing to order
        for body, scope in _bodies(index):
            walker = _Order(self, index, scope)
            for stmt in body:
                walker.walk(stmt)
            yield from walker.reports


def _is_wrapper(targets: frozenset[str]) -> bool:
    return len(targets) == 1 and any(t.startswith("flashinfer.") and t.rsplit(".", 1)[-1] in _WRAPPERS
                                     for t in targets)


def _bodies(index: ModuleIndex):
    """(statements, scope) for the module and every function, scopes matched by position."""
    yield index.tree.body, index.root
    for fn, scope in index.functions:
        body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else [fn.body]
        yield body, scope
