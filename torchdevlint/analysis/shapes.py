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


def data_of_unknown_shape(call: cst.Call, name: str) -> bool:
    """A data factory (``torch.from_numpy(obs)``, ``torch.tensor(batch)``) given a name, an
    attribute or a call for its data: the tensor has the data's shape, which the code does not
    show (not a literal number, which makes a 0-dim one)."""
    if name not in api.SCALAR_FACTORIES:
        return False
    positional, _ = _kinds(call, name, None)
    return bool(positional) and positional[0] == api.EXPRESSION


def makes_an_empty_tensor(call: cst.Call, name: str) -> bool:
    """A literal 0 among its sizes (``torch.zeros(0, 3)``), or no data (``torch.tensor([])``):
    an empty placeholder."""
    positional, sized = _kinds(call, name, None)
    if name in api.SCALAR_FACTORIES:
        return bool(positional) and positional[0] == api.EMPTY
    return any(kind in (api.ZERO, api.ZERO_ITEMS)
               for kind in api.factory_sizes(name, positional, sized))


_RANK_KEEPING = api.RANK_KEEPING_METHODS


def literal_rank(expr: cst.BaseExpression) -> Optional[int]:
    """The number of dimensions of the data a nested list or tuple display holds
    (``[[10, 13], [16, 30]]``: 2), where every element at each level is a display or
    none is; None for anything else (an empty or ragged display, a name)."""
    if not isinstance(expr, (cst.List, cst.Tuple)) or not expr.elements or \
            any(isinstance(e, cst.StarredElement) for e in expr.elements):
        return None
    values = [e.value for e in expr.elements]
    nested = [isinstance(v, (cst.List, cst.Tuple)) for v in values]
    if not any(nested):
        return 1
    if not all(nested):
        return None
    ranks = {literal_rank(v) for v in values}
    return 1 + ranks.pop() if len(ranks) == 1 and None not in ranks else None


def sizes_rank(call: cst.Call) -> Optional[int]:
    """The number of dimensions a call given sizes makes (``torch.zeros(a, b)``,
    ``torch.zeros((a, b))``, ``x.view(1, 3, 1, 1)``): how many it is given, positionally,
    or the length of the one tuple or list it is given; None when a size is spread."""
    positional = [a for a in call.args if a.keyword is None]
    if not positional or any(a.star for a in positional):
        return None
    if len(positional) == 1 and isinstance(positional[0].value, (cst.List, cst.Tuple)):
        elements = positional[0].value.elements
        return None if any(isinstance(e, cst.StarredElement) for e in elements) else len(elements)
    if len(positional) == 1 and not isinstance(positional[0].value, (cst.Integer, cst.UnaryOperation)):
        return None  # ``torch.zeros(shape)``: a size or a tuple of them
    return len(positional)


def method_rank(call: cst.Call, receiver: Optional[int]) -> Optional[int]:
    """The number of dimensions a tensor method's result has, given its receiver's
    (``receiver``, None when unknown): a reshape says its own, ``unsqueeze`` adds one, the
    casts, copies and elementwise math keep it; None for any other method."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    method = func.attr.value
    if method in api.RESHAPING_METHODS and call.args:
        return sizes_rank(call)
    if receiver is None:
        return None
    if method in api.UNSQUEEZE_METHODS:
        return receiver + 1
    if method in _RANK_KEEPING:
        return receiver
    return None


def rank_after_index(rank: int, subscript: cst.Subscript) -> Optional[int]:
    """The number of dimensions ``subscript`` leaves of a tensor of ``rank`` of them: a
    slice keeps its dimension, ``None`` adds one, any other index (a number, a name: a
    tensor index of one dimension or more leaves at least as many) takes at most one away;
    None where ``...`` hides which dimensions the others index."""
    left = rank
    for element in subscript.slice:
        index = element.slice
        if isinstance(index, cst.Slice):
            continue
        value = index.value
        if isinstance(value, cst.Ellipsis):
            return None
        if isinstance(value, cst.Name) and value.value == "None":
            left += 1
        else:
            left -= 1
    return left
