"""TDL007: inside ``forward`` of an ``nn.Module`` (or a method ``forward`` calls on ``self``),
a torch factory without ``device=`` creates a tensor on the CPU that then meets a tensor on
the module's device: an input, a parameter, a buffer, a weighted submodule's output.

Reported where the factory's result, as it is (not moved with ``.to(x.device)`` /
``.type_as(x)``, not reduced to a 0-dim value), is combined with such a tensor: arithmetic,
comparisons, a combining tensor method (``.masked_fill``, ``.matmul``), a torch function given
both (``torch.cat``, ``torch.where``; not as an index), or an argument of a submodule with
weights (an RNN's initial hidden state). Once the module is on a GPU this raises
``RuntimeError: Expected all tensors to be on the same device``. 0-dim factories
(``torch.tensor(0.5)``, ``torch.zeros(())``) combine with device tensors and are silent, as are
``*_like`` / ``x.new_*`` creations and uses as an index or a shape.

Fix: add ``device=<tensor>.device`` to the factory, naming the input the result meets (or, when
none is at hand, another input of the method or a parameter of the module). Safe when that
tensor is an argument of ``forward`` used in the very expression that creates the tensor;
unsafe otherwise (the tensor named may live elsewhere than the one it meets).

Only with evidence that the module meets an accelerator (``ModuleClasses.accelerator_evidence``,
named in the message): the file moves an instance, or uses an accelerator at all, or runs no
program (a library class, moved by its users). A script or notebook that never names a device
keeps its model on the CPU: silent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional, Set

import libcst as cst

from torchdevlint.analysis import (
    ARITHMETIC_OPERATORS, ASSIGN, Analysis, FunctionInfo, ModuleState, is_number, last_name,
    root_name, api, walk_code,
)
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Edit, Fix, FixPlan
from torchdevlint.rules.base import Rule, Violation, source_of
from torchdevlint.rules.prefilter import (
    ALWAYS_SHAPED_FACTORIES, OFF_DEVICE_FACTORIES, SIZE_FACTORIES, off_device_factory_in,
)

SAME_DEVICE = "RuntimeError: Expected all tensors to be on the same device"

# Tensor methods whose result keeps the receiver's device and at least its dimensions.
_SHAPE_KEEPING = api.SHAPE_KEEPING_METHODS
# Elementwise math (a method, or a torch function of its first argument).
_ELEMENTWISE = api.ELEMENTWISE
_OF_FIRST_ARGUMENT = api.TRIANGLE_FUNCTIONS | _ELEMENTWISE
# Torch functions whose other arguments are numbers, not tensors to meet.
_NOT_MEETING = frozenset(("multinomial",))


@dataclass
class AddDevice(FixPlan):
    """Add ``device=<tensor>.device`` to the factory call."""

    factory: cst.Call
    device: str
    safe: bool

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        args = self.factory.args
        if not args:
            return None
        end = ctx.span(args[-1].value)[1]
        text = f", device={self.device}"
        return Fix(finding.code, self.safe, f"create it on the device (`device={self.device}`)",
                   (Edit(end, end, text),))


@dataclass
class MoveThere(FixPlan):
    """Append ``.to(<tensor>.device)`` to a legacy constructor (``torch.Tensor([...])``),
    which takes no device but the CPU."""

    factory: cst.Call
    device: str
    safe: bool

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        end = ctx.span(self.factory)[1]
        return Fix(finding.code, self.safe, f"move it to the device (`.to({self.device})`)",
                   (Edit(end, end, f".to({self.device})"),))


class TensorCreatedOffDevice(Rule):
    code = "TDL007"
    name = "tensor-created-off-device"
    summary = "A tensor created without `device=` in `forward` meets the module's device tensors"
    fixable = True
    facts = frozenset(("kinds", "placement", "devices", "modules", "project"))
    # A module class (its base named through torch or a library of modules) calling a factory.
    # (``forward`` is a method defined there; the factory is named or imported by its name.
    # No ``\b`` before ``def``: a pattern that starts with a literal is searched for that
    # literal first, 0.82 -> 0.03 s over torch's sources.)
    required_text = (r"\bclass\b", r"\btorch\b", r"def\s+forward\b",
                     r"\b(?:" + "|".join(sorted(OFF_DEVICE_FACTORIES)) + r")\b")
    valid = (
        # used as an index: a CPU index tensor works with a tensor on any device
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def forward(self, x):\n        index = torch.arange(x.size(1))\n"
        "        return x[:, index]\n",
        # moved before use
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def forward(self, x):\n        mask = torch.ones(x.size(1)).to(x.device)\n"
        "        return x * mask\n",
        # 0-dim: combines with device tensors
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def forward(self, x):\n        return x.unsqueeze(0) * torch.tensor(0.5)\n",
    )
    invalid = (
        ("import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
         "    def forward(self, x):\n        mask = torch.ones(x.size(1))\n"
         "        return x * mask\n", ((7, 16),)),
    )

    could_report_in = staticmethod(off_device_factory_in)  # (in prefilter: no LibCST there)

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        self.analysis = analysis
        self.kinds = analysis.kinds
        for info in analysis.collected.classes:
            if "forward" not in info.methods:
                continue
            state = analysis.module_state(info)
            if state.is_module is not True or state.overrides_moving:
                continue
            reported: Set[int] = set()
            for name in sorted(state.forward_reaches):
                method = info.methods[name]
                if method.scope is None or method.self_name is None:
                    continue
                yield from self._check_method(state, method, reported)

    def _check_method(self, state: ModuleState, method: FunctionInfo, reported: Set[int]):
        modules = self.analysis.modules
        devices = modules.on_module_device(state, method)
        found = {}

        def stays(expr) -> bool:
            key = id(expr)
            if key not in found:
                found[key] = self._origin(expr, method)
            return found[key] is not None

        for node in walk_code(method.node.body):
            if isinstance(node, cst.Call) and (self.kinds.qualname(node.func, method.scope) or "") \
                    .rpartition(".")[2] in _NOT_MEETING:
                continue
            where = modules.meeting(node, stays, devices)
            if where is None:
                continue
            for operand in _operands(node):
                if not stays(operand):
                    continue
                factory = found[id(operand)]
                if id(factory) in reported:
                    continue
                # asked only here, for a class with a finding: what shows it meets a device
                evidence = self.analysis.modules.accelerator_evidence(state.info)
                moved = self.analysis.class_moved_in_project(state.info.name) \
                    if state.info.ctx.scope.kind == "module" else None
                if evidence is None and moved is None:
                    return  # a program that never uses an accelerator: the module stays on the CPU
                reported.add(id(factory))
                device, safe = self._device_for(node, factory, devices, state, method)
                shown = source_of(factory.func)
                # (``torch.Tensor(..., device=...)`` refuses any device but the CPU: moved)
                legacy = last_name(factory.func) in api.LEGACY_TENSOR_TYPES
                fix = None if device is None else MoveThere(factory, device, safe) if legacy \
                    else AddDevice(factory, device, safe)
                advice = "create it on the module's device" if device is None else \
                    f"move it there (`.to({device})`)" if legacy else \
                    f"create it there (`device={device}`)"
                if evidence is None:  # only another file of the project shows it
                    evidence = f"another file moves it to an accelerator: {moved}"
                elif moved is not None:  # the evidence is in another file: name it
                    advice += f" (the module is moved to an accelerator in {moved})"
                yield Violation(
                    factory,
                    f"`{shown}(...)` without `device=` creates a tensor on the CPU in "
                    f"`{state.info.name}.{method.name}`, which runs on the module's device "
                    f"({evidence}), "
                    f"and `{source_of(node)}` {where}: {SAME_DEVICE}; {advice}",
                    fix)

    # -- the CPU tensor: a factory's result, as it is --------------------------------------

    def _origin(self, expr, method: FunctionInfo) -> Optional[cst.Call]:
        if isinstance(expr, cst.Comparison) and all(  # ``mask == 0``: a CPU tensor of its shape
                is_number(c.comparator) for c in expr.comparisons):
            return self._origin(expr.left, method)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
            return self._origin(expr.expression, method)
        evidence = self.analysis.on_cpu(expr, method.scope)
        if evidence is None:
            return None
        factory = evidence.origin
        if not self._shaped_factory(factory, method):
            return None
        return factory if self._keeps(expr, factory, method, set()) else None

    def _shaped_factory(self, call: cst.Call, method: FunctionInfo) -> bool:
        """A torch factory without ``device=`` whose result has a dimension."""
        qualified = self.kinds.qualname(call.func, method.scope) or ""
        if not qualified.startswith("torch.") or qualified.count(".") != 1:
            return False
        if any(a.star == "**" for a in call.args) or any(
                a.keyword is not None and a.keyword.value == "device" for a in call.args):
            return False
        tail = qualified[len("torch."):]
        if any(a.star for a in call.args):
            # ``torch.zeros(n, *y.shape[1:])``: the sizes written out give it a dimension
            fixed = [a.value for a in call.args if a.keyword is None and not a.star]
            return tail in SIZE_FACTORIES and tail != "full" and bool(fixed) and not any(
                isinstance(v, cst.Integer) and v.evaluated_value == 0 for v in fixed)
        positional = [a.value for a in call.args if a.keyword is None]
        sized = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "size"]
        if tail in ALWAYS_SHAPED_FACTORIES:
            return True
        if tail in api.LEGACY_TENSOR_TYPES:
            return bool(positional)  # ``torch.Tensor([...])``, ``torch.Tensor(n)``: never 0-dim
        if tail == "tensor":
            return len(positional) == 1 and self.kinds.is_sequence(positional[0], method.scope)
        if tail == "randint":
            sizes = [v for v in positional if isinstance(v, (cst.Tuple, cst.List))] + sized
            return len(sizes) == 1 and _nonempty_size(sizes[0])
        if tail in SIZE_FACTORIES:
            sizes = positional[:1] if tail == "full" else positional
            if not sizes:
                sizes = sized
            if len(sizes) != 1:
                return len(sizes) > 1 and not any(
                    isinstance(v, cst.Integer) and v.evaluated_value == 0 for v in sizes)
            return _nonempty_size(sizes[0])
        return False

    def _keeps(self, expr, factory: cst.Call, method: FunctionInfo, seen: Set[str]) -> bool:
        """``expr`` is ``factory``'s result with at least its dimensions, still on the CPU."""
        if expr is factory:
            return True
        if isinstance(expr, cst.Name):
            name = expr.value
            if name in method.param_names:
                return False
            if name in seen:  # ``emb = x * emb``: the other assignments decide
                return True
            bindings = method.scope.bindings.get(name, ())
            if not bindings:
                return False
            related = False
            for binding in bindings:
                if binding.how == ASSIGN and _contains(binding.value, expr):
                    continue  # ``emb = x * emb[None]``: the read comes before this assignment
                if binding.how != ASSIGN:
                    return False
                evidence = self.analysis.on_cpu(binding.value, method.scope)
                if evidence is None or evidence.origin is not factory:
                    continue  # another value (a device tensor, another CPU tensor)
                if binding.path:
                    return False  # unpacked from something holding the factory's tensor
                if not self._keeps(binding.value, factory, method, seen | {name}):
                    return False  # somewhere reduced (``.sum()``) or moved (``.type_as(x)``)
                related = True
            return related
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and self.kinds.qualname(func, method.scope) is None:
                method_name = func.attr.value
                if method_name == "view" and not expr.args:
                    return False
                return (method_name in _SHAPE_KEEPING or method_name in _ELEMENTWISE) and \
                    self._keeps(func.value, factory, method, seen)
            qualified = self.kinds.qualname(func, method.scope) or ""
            tail = qualified.rpartition(".")[2]
            positional = [a.value for a in expr.args if a.keyword is None]
            if not qualified.startswith("torch.") or not positional:
                return False
            if tail in _OF_FIRST_ARGUMENT:
                return self._keeps(positional[0], factory, method, seen)
            if tail in ("cat", "stack") and isinstance(positional[0], (cst.List, cst.Tuple)):
                return any(not isinstance(e, cst.StarredElement) and
                           self._keeps(e.value, factory, method, seen)
                           for e in positional[0].elements)
            return False
        if isinstance(expr, cst.Subscript):
            keeps_a_dim = all(isinstance(e.slice, cst.Slice) or (
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Name)
                and e.slice.value.value == "None") for e in expr.slice)
            return keeps_a_dim and self._keeps(expr.value, factory, method, seen)
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in ("T", "mT") and self._keeps(expr.value, factory, method, seen)
        if isinstance(expr, cst.UnaryOperation):
            return self._keeps(expr.expression, factory, method, seen)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, ARITHMETIC_OPERATORS):
            return self._keeps(expr.left, factory, method, seen) or \
                self._keeps(expr.right, factory, method, seen)
        if isinstance(expr, cst.Comparison):
            return self._keeps(expr.left, factory, method, seen)
        return False

    # -- the fix: which tensor's device --------------------------------------------------------

    def _device_for(self, node, factory: cst.Call, devices, state: ModuleState,
                    method: FunctionInfo):
        """(``NAME.device`` text, safe) for the fix, or (None, False)."""
        params = [p for p in method.param_names if p != method.self_name]
        tensors = [p for p in params if p in devices.names or devices.carries(cst.Name(p))]
        for operand in _operands(node):
            root = root_name(operand)
            if root in tensors and devices.carries(operand):
                safe = method.name == "forward" and _contains(node, factory)
                return f"{root}.device", safe
        if tensors:
            return f"{tensors[0]}.device", False
        owned = sorted(state.parameters | state.buffers)
        if owned:
            return f"{method.self_name}.{owned[0]}.device", False
        return None, False


def _operands(node) -> list:
    """The expressions ``node`` combines (its operands, arguments, list elements, receiver)."""
    if isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    if isinstance(node, cst.Comparison):
        return [node.left] + [c.comparator for c in node.comparisons]
    if isinstance(node, cst.Call):
        values = [a.value for a in node.args]
        spread = [e.value for v in values if isinstance(v, (cst.List, cst.Tuple))
                  for e in v.elements]
        receiver = [node.func.value] if isinstance(node.func, cst.Attribute) else []
        return receiver + values + spread
    return []


def _contains(node: cst.CSTNode, target: cst.CSTNode) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if current is target:
            return True
        stack.extend(current.children)
    return False


def _nonempty_size(size) -> bool:
    """A size with a dimension and no literal 0 (an empty tensor is a placeholder)."""
    if isinstance(size, (cst.Tuple, cst.List)):
        return bool(size.elements) and not any(
            isinstance(e.value, cst.Integer) and e.value.evaluated_value == 0 for e in size.elements)
    if isinstance(size, cst.Integer):
        return size.evaluated_value != 0
    return isinstance(size, (cst.Integer, cst.Name, cst.Attribute, cst.BinaryOperation, cst.Call,
                             cst.Subscript))
