"""TDL001: the result of a tensor move is thrown away."""

from __future__ import annotations

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
