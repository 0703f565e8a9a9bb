"""What a plain function of this file does with its parameters: one summary per function,
made by one walk of its body, so that a rule judging a call can see the bug that the call and
the function make together (issue 28: "a model and a CPU tensor that meet inside another
function", "a factory in a helper called from forward", a move thrown away through a helper).

``Callees.summary(info)`` walks the body once with each parameter as a marked value (the
``on_cpu`` walk of ``placement``: tensor methods, indexing, arithmetic and torch functions keep
the mark; a move, or a reassignment from anything else, drops it) and records:

- ``moves``: the parameter whose move every ``return`` gives (``return batch.to(device)``,
  ``return batch["x"].cuda()``), with the move: a caller that throws the result away has
  moved nothing;
- ``feeds``: (tensor parameter, parameter called with it): ``def generate(model, idx): ...
  model(idx[:, -n:])``; a caller's arguments for the two meet in that call;
- ``meets``: (parameter, parameter, the operation) where the values of two parameters meet
  in arithmetic, an elementwise comparison or a torch function that needs its tensors on one
  device (``signal + noise``, ``torch.cat([features, padding])``, ``predictions == labels``),
  or where one indexes the other (``tensor[t]``: the indexed one first; only a CPU tensor
  given an index on a device fails).

Plain top-level functions of the file are summarised (``Placement.helper_called``), and
methods a rule asks about (``Placement.object_method_called``: ``self.step(batch)`` of a
trainer object), whose ``feeds`` also name the attributes of the object that they call with
a parameter's value (``self.model(x)``: ".model"). A nested function, a generator or a
decorated function may not return or do what its body says to its caller.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst

from torchdevlint import torch_api as api
from torchdevlint.analysis import kinds as K
from torchdevlint.analysis.builder import walk_code
from torchdevlint.analysis.model import PARAM, FunctionInfo, root_name, source_of
from torchdevlint.analysis.placement import (
    SELF_ATTRIBUTE, Placement, _AcceleratorWalk, _FromParameter, _PointTrace,
    argument_for_parameter,
)

_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo,
               cst.Power, cst.MatrixMultiply)
_ELEMENTWISE = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual,
                cst.Equal, cst.NotEqual)


class CalleeSummary:
    """What one plain function does with its parameters (see the module docstring)."""

    __slots__ = ("moves", "feeds", "meets")

    def __init__(self) -> None:
        self.moves: Dict[str, cst.Call] = {}
        self.feeds: List[Tuple[str, str]] = []
        self.meets: List[Tuple[str, str, cst.CSTNode]] = []


_NOTHING = CalleeSummary()


class Callees:
    """The summaries of the file's plain functions, each made on the first question."""

    def __init__(self, placement: Placement) -> None:
        self.placement = placement
        self._summaries: Dict[int, CalleeSummary] = {}

    def summary(self, info: FunctionInfo) -> CalleeSummary:
        key = id(info.node)
        known = self._summaries.get(key)
        if known is None:
            self._summaries[key] = _NOTHING  # (a recursive function: nothing from itself)
            known = self._summaries[key] = self._summarize(info)
        return known

    def summary_of_call(self, call: cst.Call, scope) -> Optional[Tuple[FunctionInfo, CalleeSummary]]:
        """The function ``call`` calls (a plain top-level function of this file) and its
        summary, or None."""
        info = self.placement.helper_called(call, scope)
        if info is None:
            return None
        return info, self.summary(info)

    def function_called(self, call: cst.Call, scope) -> Optional[Tuple[FunctionInfo, str, Callable]]:
        """The function of this file that ``call`` runs with its arguments as they are, the
        name a message shows it by, and what the call passes for a parameter of it (a
        function of a parameter's name, None where it passes nothing for it): a plain
        top-level function (``Placement.helper_called``), a static method called through its
        class or on ``self`` (``Masking.apply_mask(scores, mask)``), or the static ``forward``
        of a custom autograd operation of the file (``MaskedLinear.apply(x, w, mask)`` runs
        ``forward(ctx, x, w, mask)``). None for anything else."""
        placement = self.placement
        info = placement.helper_called(call, scope)
        if info is not None:
            return info, info.name, lambda name: argument_for_parameter(call, info, name)
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        kinds = placement.kinds
        receiver = kinds.kind_of(func.value, scope)
        owner = scope.code_owner().func
        if isinstance(receiver, K.ClassRef):
            cls = receiver.info
        elif isinstance(func.value, cst.Name) and owner is not None and owner.cls is not None \
                and owner.self_name == func.value.value:
            cls = owner.cls
        else:
            return None
        if func.attr.value == "apply" and isinstance(receiver, K.ClassRef):
            forward = cls.methods.get("forward")
            if forward is None or forward.scope is None or not K.is_static(forward) or \
                    not any(kinds.qualname(base, cls.ctx.scope) in api.AUTOGRAD_FUNCTION_BASES
                            for base in cls.bases) or \
                    any(arg.star or arg.keyword is not None for arg in call.args):
                return None
            given = dict(zip(forward.param_names[1:], (arg.value for arg in call.args)))
            return forward, f"{cls.name}.apply", given.get
        method = kinds.find_method(cls, func.attr.value)
        if method is None or method.scope is None or not K.is_static(method):
            return None
        return method, f"{source_of(func.value)}.{method.name}", \
            lambda name: argument_for_parameter(call, method, name)

    def meetings_in_call(self, call: cst.Call, scope) -> List[tuple]:
        """(argument, argument, the operation, the function's name) for each two arguments of
        ``call`` that meet in an operation of the function of this file it runs
        (``function_called``, ``CalleeSummary.meets``): ``add_noise(h, noise)`` of ``def
        add_noise(x, noise): return x + noise`` makes ``h`` and ``noise`` meet there. For a
        subscript, the indexed argument first."""
        called = self.function_called(call, scope)
        if called is None:
            return []
        info, shown, argument = called
        found = []
        for first, second, operation in self.summary(info).meets:
            given, other = argument(first), argument(second)
            if given is not None and other is not None:
                found.append((given, other, operation, shown))
        return found

    def _summarize(self, info: FunctionInfo) -> CalleeSummary:
        found = CalleeSummary()
        scope = info.scope
        if scope is None or (info.cls is not None and not info.self_name
                             and not K.is_static(info)):
            return found  # (a static method is given its arguments as they are)
        parameters = [name for name, bindings in scope.bindings.items()
                      if bindings and bindings[0].how == PARAM and name != info.self_name
                      and bindings[0].value[0].star not in ("*", "**")]
        if not parameters:
            return found
        placement = self.placement
        at: Dict[int, object] = {}
        walk = _AcceleratorWalk(placement, scope, at, "cpu")
        walk.placed.update((name, _FromParameter(name)) for name in parameters)
        body = info.node.body
        if isinstance(body, cst.IndentedBlock):
            walk.walk(body.body)
        else:
            walk._suite(body)
        trace = _PointTrace(placement, scope, at, "cpu")

        def parameter_of(expr) -> Optional[str]:
            value = trace.device_of(expr)
            return value.name if isinstance(value, _FromParameter) else None

        never_rebound = {name for name in parameters if len(scope.bindings[name]) == 1}
        # the move every return gives, of a parameter never rebound
        moved = []
        for value, ctx in info.returns:
            receiver = value.func.value if isinstance(value, cst.Call) and \
                isinstance(value.func, cst.Attribute) else None
            root = root_name(receiver) if receiver is not None else None
            if root is None or ctx.scope is not scope or root.value not in never_rebound or \
                    not placement.device_of_move(value, scope)[0]:
                moved = []
                break
            moved.append((root.value, value))
        if moved and len({name for name, _ in moved}) == 1:
            found.moves[moved[0][0]] = moved[0][1]
        for node in walk_code(body):
            if isinstance(node, cst.Call):
                self._call(node, scope, never_rebound, parameter_of, found, info.self_name)
            elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
                self._meet([node.left, node.right], node, parameter_of, found)
            elif isinstance(node, cst.Comparison) and all(
                    isinstance(c.operator, _ELEMENTWISE) for c in node.comparisons):
                self._meet([node.left] + [c.comparator for c in node.comparisons], node,
                           parameter_of, found)
            elif isinstance(node, cst.Subscript):
                # ``tensor[t]`` (a diffusion schedule indexed by timesteps): the indexed
                # parameter first, then the index (only a CPU tensor given a device index fails)
                indexed = parameter_of(node.value)
                for element in node.slice:
                    index = parameter_of(element.slice.value) \
                        if isinstance(element.slice, cst.Index) else None
                    if indexed is not None and index is not None and index != indexed:
                        found.meets.append((indexed, index, node))
        return found

    def _call(self, call: cst.Call, scope, callees, parameter_of, found: CalleeSummary,
              self_name: Optional[str] = None) -> None:
        func = call.func
        called = None
        if isinstance(func, cst.Name) and func.value in callees:
            called = func.value  # ``model(x)``: the parameter called (never rebound)
        elif self_name and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.value.value == self_name:
            called = SELF_ATTRIBUTE + func.attr.value  # ``self.model(x)`` in a method
        if called is not None:
            # called with another parameter's value
            for arg in call.args:
                if arg.star:
                    continue
                fed = parameter_of(arg.value)
                if fed is not None and fed != called and (fed, called) not in found.feeds:
                    found.feeds.append((fed, called))
            return
        qualified = self.placement.kinds.qualname(func, scope)
        if qualified is None:
            return
        head, _, tail = qualified.rpartition(".")
        if not ((head == "torch" and tail in api.SAME_DEVICE_FUNCTIONS) or
                (head == "torch.nn.functional" and tail in api.SAME_DEVICE_FUNCTIONAL)):
            return
        values = []
        for arg in call.args:
            if arg.keyword is not None or arg.star:
                continue
            if isinstance(arg.value, (cst.List, cst.Tuple)):
                values += [e.value for e in arg.value.elements
                           if not isinstance(e, cst.StarredElement)]
            else:
                values.append(arg.value)
        self._meet(values, call, parameter_of, found)

    @staticmethod
    def _meet(operands, node, parameter_of, found: CalleeSummary) -> None:
        names = []
        stack = list(reversed(operands))
        while stack:
            operand = stack.pop()
            if isinstance(operand, cst.BinaryOperation) and \
                    isinstance(operand.operator, _ARITHMETIC):
                # ``x + scale * noise``: each parameter the arithmetic carries along
                # (``scale * noise`` is where ``noise`` is, and so meets ``x``)
                stack += [operand.right, operand.left]
                continue
            name = parameter_of(operand)
            if name is not None and name not in names:
                names.append(name)
        for i, first in enumerate(names):
            for second in names[i + 1:]:
                found.meets.append((first, second, node))
