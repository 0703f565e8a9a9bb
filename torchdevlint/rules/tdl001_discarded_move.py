"""TDL001: the result of a tensor move is thrown away."""

from __future__ import annotations

import ast

from typing import Iterator

import libcst as cst

from torchdevlint.analysis import Analysis
from torchdevlint.rules.base import Rule, Violation, method_call_text, source_of

MOVE_METHODS = ("to", "cuda", "cpu")


class DiscardedTensorMove(Rule):
    code = "TDL001"
    name = "discarded-tensor-move"
    summary = "Result of Tensor.to()/.cuda()/.cpu() is discarded; the tensor does not move"
    required_text = method_call_text(*MOVE_METHODS)

    @staticmethod
    def could_report_in(tree: ast.AST) -> bool:
        # Only a move that is a whole expression statement is reported: ``.to(`` is in most
        # files, such a statement in few.
        return any(isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
                   and isinstance(statement.value.func, ast.Attribute)
                   and statement.value.func.attr in MOVE_METHODS
                   for statement in _statements(tree))

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        calls = analysis.collected.calls_by_name
        for method in MOVE_METHODS:
            for site in calls.get(method, ()):
                if site.statement is None or not isinstance(site.call.func, cst.Attribute):
                    continue
                receiver = site.call.func.value
                if not analysis.kinds.is_tensor(receiver, site.ctx.scope):
                    continue
                name = source_of(receiver)
                if isinstance(receiver, (cst.Name, cst.Attribute)):
                    advice = f"assign it (`{name} = {source_of(site.call, 60)}`)"
                else:  # ``loss.detach().cpu()``: nothing to rebind, the statement does nothing
                    advice = "use the result or remove the statement"
                yield Violation(
                    site.call,
                    f"result of `{name}.{method}()` is discarded: Tensor.{method}() returns a new "
                    f"tensor and leaves `{name}` where it was; {advice}",
                    fix=site,  # --fix rebinds the receiver (torchdevlint.fixes.tdl001)
                )


_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(tree: ast.AST):
    """Every statement in ``tree``, without visiting expressions (a tenth of the nodes)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for name in _BLOCK_FIELDS:
            block = getattr(node, name, None)
            if block:
                stack.extend(block)
