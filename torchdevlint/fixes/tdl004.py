"""TDL004 fix: move each unmoved batch value at the start of the loop body.

``x = x.to(<device>)`` goes first in the loop body, or right after the statement that unpacks
the batch when that happens in the body. ``<device>`` is the expression the model was moved
with when it can be written at that point (a plain name or attribute chain, bound in the same
function or module), else ``next(model.parameters()).device``. Safe when the value is known
to be a tensor; unsafe otherwise (a list of strings has no ``.to()``). A batch fed as
``**batch`` becomes ``{k: v.to(<device>) for k, v in batch.items()}``: unsafe, since values
that are not tensors would fail. One-line loop bodies get no fix.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchdevlint.analysis import kinds as K
from torchdevlint.analysis.model import Scope, dotted_name, root_name
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Edit, Fix
from torchdevlint.rules.tdl004_unmoved_batch import UnmovedBatchFix


def build(finding: Finding, ctx: FixContext) -> Optional[Fix]:
    payload = finding.fix
    if not isinstance(payload, UnmovedBatchFix):
        return None
    loop_ctx = ctx.loop_ctx(payload.loop)
    body = payload.loop.body
    if loop_ctx is None or not isinstance(body, cst.IndentedBlock) or not body.body:
        return None
    scope = loop_ctx.scope
    device = _device_text(payload, scope, ctx)
    if device is None:
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
    if payload.is_mapping:
        key, value = ("k", "v") if not {"k", "v"} & set(_words(device)) else ("key_", "value_")
        moved = f"{{{key}: {value}.to({device}) for {key}, {value} in {name}.items()}}"
        safe = False
    else:
        moved = f"{name}.to({device})"
        safe = ctx.analysis.kinds.name_kind(name, scope) is K.TENSOR
    line = f"{ctx.indent(anchor)}{name} = {moved}{ctx.newline}"
    return Fix(finding.code, safe, f"move `{name}` to `{device}` in the loop",
               (Edit(offset, offset, line),))


def _device_text(payload: UnmovedBatchFix, scope: Scope, ctx: FixContext) -> Optional[str]:
    device = payload.device
    if device is not None:
        text = dotted_name(device)
        root = root_name(device)
        if text is not None and root is not None:
            owner = scope.resolve(root.value)
            # the name must mean here what it meant where the model was moved
            if owner is not None and ctx.contains(owner.node, device) and \
                    _not_in_nested_function(owner, device, ctx):
                return text
    model = dotted_name(payload.model)
    if model is None or not ctx.free_names_resolve(payload.model, scope):
        return None
    return f"next({model}.parameters()).device"


def _not_in_nested_function(owner: Scope, node: cst.CSTNode, ctx: FixContext) -> bool:
    """Whether ``node`` sits in ``owner``'s own code, not in a function nested in it."""
    for info in ctx.analysis.collected.functions:
        if info.scope is not None and info.scope is not owner and \
                ctx.contains(owner.node, info.node) and ctx.contains(info.node, node):
            return owner.node is info.node
    return True


def _words(text: str):
    return text.replace("(", ".").replace(")", ".").split(".")
