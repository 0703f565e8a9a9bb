"""TDL004 fix: move each unmoved batch value at the start of the loop body.

``x = x.to(<device>)`` goes first in the loop body, or right after the statement that unpacks
the batch when that happens in the body. What follows ``x = `` is the text the rule's message
proposes (the rule chooses it, so the two cannot disagree): ``<device>`` is the expression the
model was moved with when it can be written at that point (a plain name or attribute chain,
bound in the same function or module), else ``next(model.parameters()).device``. Safe when the value is known
to be a tensor; unsafe otherwise (a list of strings has no ``.to()``). A batch fed as
``**batch`` becomes ``{k: v.to(<device>) for k, v in batch.items()}``: unsafe, since values
that are not tensors would fail. One-line loop bodies get no fix.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchdevlint.analysis import kinds as K
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Edit, Fix
from torchdevlint.rules.tdl004_unmoved_batch import UnmovedBatchFix


def build(finding: Finding, ctx: FixContext) -> Optional[Fix]:
    payload = finding.fix
    if not isinstance(payload, UnmovedBatchFix) or payload.moved is None:
        return None
    loop_ctx = ctx.loop_ctx(payload.loop)
    body = payload.loop.body
    if loop_ctx is None or not isinstance(body, cst.IndentedBlock) or not body.body:
        return None
    if payload.after is None:
        anchor = body.body[0]
        offset = ctx.span(anchor)[0]
    else:
        anchor = payload.after
        if not isinstance(anchor, cst.SimpleStatementLine):
            return None
        offset = ctx.span(anchor)[1]
    if not ctx.at_line_start(offset):
        return None
    name = payload.name
    # a dict of anything is not known to hold only tensors
    safe = not payload.is_mapping and \
        ctx.analysis.kinds.name_kind(name, loop_ctx.scope) is K.TENSOR
    line = f"{ctx.indent(anchor)}{name} = {payload.moved}{ctx.newline}"
    return Fix(finding.code, safe, f"move `{name}` in the loop: `{name} = {payload.moved}`",
               (Edit(offset, offset, line),))
