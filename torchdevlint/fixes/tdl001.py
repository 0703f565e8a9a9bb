"""TDL001 fix: assign the result of the move back to its receiver.

``x.to(d)`` -> ``x = x.to(d)``: safe when ``x`` is a plain name bound in the scope of the
statement. A name from an enclosing function or the module gets no fix: assigning it would make
it local to the function (UnboundLocalError on the read). ``self.buf.to(d)`` ->
``self.buf = self.buf.to(d)`` is unsafe: assigning a plain tensor over an ``nn.Parameter``
attribute raises TypeError. ``batch["input"].cuda()`` in a loop that uses the batch ->
``batch["input"] = batch["input"].cuda()`` is unsafe too: a tuple batch has no item
assignment. Any other receiver (``loss.detach().cpu()``) gets no fix.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchdevlint.analysis.model import dotted_name
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Edit, Fix
from torchdevlint.rules.tdl001_discarded_move import DiscardedMove


def build(finding: Finding, ctx: FixContext) -> Optional[Fix]:
    payload = finding.fix
    if not isinstance(payload, DiscardedMove) or payload.site.statement is None:
        return None
    site = payload.site
    func = site.call.func
    if not isinstance(func, cst.Attribute):
        return None
    receiver, scope = func.value, site.ctx.scope
    if isinstance(receiver, cst.Name):
        name = receiver.value
        if scope.resolve(name) is not scope or name in scope.global_names \
                or name in scope.nonlocal_names:
            return None
        safe = True
    elif isinstance(receiver, cst.Attribute):
        name = dotted_name(receiver)
        if name is None:
            return None
        safe = False
    elif isinstance(receiver, cst.Subscript) and payload.batch_item:
        name = ctx.text(receiver)
        safe = False  # a tuple batch has no item assignment
    else:
        return None
    start = ctx.span(site.call)[0]
    return Fix(finding.code, safe, f"assign the moved tensor back to `{name}`",
               (Edit(start, start, f"{name} = "),))
