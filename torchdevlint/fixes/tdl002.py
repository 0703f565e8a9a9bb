"""TDL002 fixes: choose the device at runtime.

- A ``"cuda"`` (or ``"cuda:0"``) literal in a device position becomes
  ``"cuda" if torch.cuda.is_available() else "cpu"``. Safe when torch uses the literal as a
  device right there (``device=``/``map_location=`` of a torch call, ``.to()``): where CUDA is
  available nothing changes (device 0 exists whenever CUDA is available), elsewhere torch
  raised an error. Unsafe for ``torch.device("cuda")`` (a value that may be compared), a
  parameter default, a variable or another function's ``device=``. Other indices
  (``"cuda:1"``, ``torch.device("cuda", i)``) get no fix: availability does not say the
  device exists.
- ``x.cuda()`` becomes ``x.to(device)``, ``device`` being a guarded device variable in scope,
  or else one module-level ``device = torch.device("cuda" if torch.cuda.is_available() else
  "cpu")`` added after the imports (under a name the file does not use, with ``import torch``
  if needed). Safe when ``x`` is known to be a tensor or a module, whose ``.to(device)`` does
  what ``.cuda()`` does; unsafe otherwise (another class may have ``.cuda()`` but no ``.to()``).
  ``.cuda(...)`` with arguments (a device index, ``non_blocking=``) gets no fix, and neither
  does a ``.cuda()`` statement whose result is discarded (the rule gives no payload): the
  rewrite would still discard it.
- ``torch.cuda.FloatTensor`` and friends get no fix.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchdevlint.analysis import kinds as K
from torchdevlint.analysis.model import CallSite, string_value
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Edit, Fix
from torchdevlint.rules.tdl002_hardcoded_cuda import FIXABLE_LITERALS, CudaLiteral


def build(finding: Finding, ctx: FixContext) -> Optional[Fix]:
    payload = finding.fix
    if isinstance(payload, CudaLiteral):
        return _literal(finding, payload, ctx)
    if isinstance(payload, CallSite):
        return _cuda_call(finding, payload, ctx)
    return None


def _literal(finding: Finding, payload: CudaLiteral, ctx: FixContext) -> Optional[Fix]:
    literal = payload.literal
    if not isinstance(literal, cst.SimpleString) or string_value(literal) not in FIXABLE_LITERALS:
        return None
    if _with_explicit_index(literal, payload, ctx):
        return None
    start, end = ctx.span(literal)
    torch = ctx.torch_reference(payload.scope, start)
    if torch is None:
        return None
    alias, needs_import = torch
    quote = literal.quote if len(literal.quote) == 1 else '"'
    text = f"{ctx.text(literal)} if {alias}.cuda.is_available() else {quote}cpu{quote}"
    if isinstance(ctx.parent(literal), cst.IfExp):
        text = f"({text})"  # a conditional expression inside another one
    edits = (Edit(start, end, text),)
    if needs_import:
        edits = (ctx.import_torch_edit(),) + edits
    return Fix(finding.code, _torch_device_argument(literal, payload, ctx),
               "choose CUDA only when it is available", edits)


def _cuda_call(finding: Finding, site: CallSite, ctx: FixContext) -> Optional[Fix]:
    call, scope = site.call, site.ctx.scope
    if call.args or not isinstance(call.func, cst.Attribute):
        return None
    call_start, call_end = ctx.span(call)
    closing = call_end - sum(len(ctx.text(paren)) for paren in call.rpar) - 1
    if ctx.source[closing] != ")":
        return None
    device = ctx.guarded_device_variable(scope, call_start)
    edits = ()
    if device is None:
        defined = ctx.module_device(scope, call_start)
        if defined is None:
            return None
        device, definition = defined
        edits = (definition,)
    attr_start, attr_end = ctx.span(call.func.attr)
    edits += (Edit(attr_start, attr_end, "to"), Edit(closing, closing, device))
    kind = ctx.analysis.kind_of(call.func.value, scope)
    safe = kind is K.TENSOR or ctx.analysis.kinds.is_module(kind)
    return Fix(finding.code, safe, f"replace `.cuda()` with `.to({device})`", edits)


def _torch_device_argument(literal: cst.BaseExpression, payload: CudaLiteral,
                           ctx: FixContext) -> bool:
    """Whether torch uses the literal as a device right there (``torch.zeros(...,
    device="cuda")``, ``x.to("cuda")``, ``torch.load(f, map_location="cuda")``): without CUDA
    that raised, so choosing at runtime changes nothing that worked. ``torch.device("cuda")``
    is only a value (it may be compared: ``torch.device("cuda") in devices``), and a default,
    a variable or another function's keyword may be compared or stored rather than used."""
    arg = ctx.parent(literal)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(call, cst.Call) or arg.star:
        return False
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "to":
        return True
    qualified = ctx.analysis.qualname(call.func, payload.scope) or ""
    return qualified.startswith("torch.") and arg.keyword is not None and \
        arg.keyword.value in ("device", "map_location")


def _with_explicit_index(literal: cst.BaseExpression, payload: CudaLiteral,
                         ctx: FixContext) -> bool:
    """``torch.device("cuda", index)``: the index is explicit, as in ``"cuda:1"``."""
    arg = ctx.parent(literal)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(call, cst.Call) or \
            ctx.analysis.qualname(call.func, payload.scope) != "torch.device":
        return False
    return len(call.args) > 1
