"""Devices: the one convention for names that hold a device, the one reading of a move's
device argument, and whether an expression is the CPU or a dtype.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchdevlint import torch_api as api
from torchdevlint.analysis.kinds import KindInference
from torchdevlint.analysis.model import ASSIGN, Scope, keyword_value, last_name, string_value


def is_device_name(identifier: str) -> bool:
    """A name whose last word is ``device`` or ``dev``, any case (``device``,
    ``target_device``, ``dev``): by convention it holds a device (``devices``, ``device_map``,
    ``device_type``, a numbered ``device_0``, a GPU's index ``args.gpu`` do not)."""
    return identifier.lower().rpartition("_")[2] in api.DEVICE_NAME_WORDS


def names_a_length(expr) -> bool:
    """``lengths``, ``input_lengths``, ``batch.seq_lens``, ``src_len``: by its name a length
    or a size (``api.LENGTH_WORDS``), which code keeps on the CPU on purpose beside tensors on a
    device (``pack_padded_sequence``, ``ctc_loss``). False for a value without a name."""
    name = last_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    if name is None:
        return False
    lowered = name.lower()
    return bool(api.LENGTH_WORDS & set(lowered.split("_"))) or lowered in api.LENGTH_WORDS


def device_names_visible(scope: Scope) -> list:
    """Names visible from ``scope`` that by convention hold a device, ``device`` first
    (a class body's names are not visible from its methods)."""
    names = set()
    current: Optional[Scope] = scope
    first = True
    while current is not None:
        if first or current.kind != "class":
            names.update(n for n in current.bindings if is_device_name(n))
        first = False
        current = current.parent
    return sorted(names, key=lambda n: (n != "device", n))


def move_device_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The device (or dtype, or tensor) argument of ``X.to(...)``: ``device=``, else the
    first positional argument."""
    keyword = keyword_value(call, "device")
    if keyword is not None:
        return keyword
    return next((a.value for a in call.args if a.keyword is None and not a.star), None)


class Devices:
    """Asked through ``Analysis.is_cpu_device`` / ``Analysis.is_dtype``."""

    def __init__(self, kinds: KindInference) -> None:
        self.kinds = kinds

    def qualname(self, expr: cst.BaseExpression, scope: Scope) -> Optional[str]:
        return self.kinds.qualname(expr, scope)

    def is_cpu_device(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
        """``"cpu"`` (``"cpu:0"``), ``torch.device("cpu")`` or a name bound only to such a
        value."""
        value = string_value(expr)
        if value is not None:
            return value == "cpu" or value.startswith("cpu:")
        if isinstance(expr, cst.Call) and expr.args and self.qualname(expr.func, scope) == "torch.device":
            return self.is_cpu_device(expr.args[0].value, scope, depth + 1)
        if isinstance(expr, cst.Name) and depth < 4:
            bindings = scope.lookup(expr.value)
            return bool(bindings) and all(
                b.how == ASSIGN and not b.path and self.is_cpu_device(b.value, b.ctx.scope, depth + 1)
                for b in bindings)
        if isinstance(expr, cst.Attribute) and depth < 4:
            # ``self._cpu_device`` of ``self._cpu_device = torch.device("cpu")`` (detectron2's
            # evaluators), an attribute of an object of a class of this file
            bindings = self.kinds.attribute_assignments(expr, scope)
            return bool(bindings) and all(
                b.how == ASSIGN and not b.path and isinstance(b.value, cst.BaseExpression)
                and self.is_cpu_device(b.value, b.ctx.scope, depth + 1) for b in bindings)
        return False

    def is_dtype(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        qualified = self.qualname(expr, scope)
        return qualified is not None and qualified.startswith("torch.") and \
            qualified.rpartition(".")[2] in api.DTYPE_NAMES
