"""Whether a torch factory call makes a tensor with a dimension: the one answer
(``torch_api.factory_dimensions``) read from a LibCST call. A 0-dim CPU tensor combines with a
tensor on any device, so TDL005, TDL007 and TDL011 all ask it; the ast prefilters ask the
same function through their own reading of Python's ast (``rules/prefilter.py``)."""

from __future__ import annotations

from typing import Callable, List, Optional

import libcst as cst

from torchdevlint import torch_api as api


def argument_kind(expr: cst.BaseExpression) -> str:
    """What ``torch_api.factory_dimensions`` needs to know of one argument."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        if not expr.elements:
            return api.EMPTY
        if any(isinstance(e.value, cst.Integer) and e.value.evaluated_value == 0
               for e in expr.elements):
            return api.ZERO_ITEMS
        return api.ITEMS
    if isinstance(expr, cst.ListComp):
        return api.COMPREHENSION
    if isinstance(expr, cst.Integer):
        return api.ZERO if expr.evaluated_value == 0 else api.NUMBER
    if isinstance(expr, (cst.Name, cst.Attribute, cst.BinaryOperation, cst.Call, cst.Subscript)):
        return api.EXPRESSION
    return api.OTHER


def _kinds(call: cst.Call, name: str,
           holds_items: Optional[Callable[[cst.BaseExpression], bool]]):
    values = [a.value for a in call.args if a.keyword is None]
    positional: List[str] = [api.OTHER if a.star else argument_kind(a.value)
                             for a in call.args if a.keyword is None]  # (``*sizes``: unknown)
    if holds_items is not None and name in api.SCALAR_FACTORIES and positional and \
            positional[0] == api.EXPRESSION and holds_items(values[0]):
        positional[0] = api.ITEMS  # the data: a name the caller knows to hold a list
    sized = [argument_kind(a.value) for a in call.args
             if a.keyword is not None and a.keyword.value == "size"]
    return positional, sized


def factory_dimensions(call: cst.Call, name: str,
                       holds_items: Optional[Callable[[cst.BaseExpression], bool]] = None
                       ) -> Optional[bool]:
    """``torch_api.factory_dimensions`` of ``call`` to the factory ``name``: True when it makes
    a tensor with a dimension, False when it may make a 0-dim one, None when its arguments do
    not tell. ``holds_items``: where a caller knows a name to hold a non-empty list."""
    positional, sized = _kinds(call, name, holds_items)
    return api.factory_dimensions(name, positional, sized)


def makes_an_empty_tensor(call: cst.Call, name: str) -> bool:
    """A literal 0 among its sizes (``torch.zeros(0, 3)``): an empty placeholder."""
    positional, sized = _kinds(call, name, None)
    return any(kind in (api.ZERO, api.ZERO_ITEMS)
               for kind in api.factory_sizes(name, positional, sized))
