"""Module classes: what an ``nn.Module`` class of the file registers with torch (parameters,
buffers, submodules: what ``model.to(device)`` moves, ``parameters()`` lists and
``state_dict()`` saves) and what it holds that torch does not see (plain tensor attributes,
plain lists and dicts of modules). The ``modules`` fact.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

import libcst as cst

from torchdevlint.analysis.builder import Collected, walk_code
from torchdevlint.analysis.kinds import TENSOR, KindInference
from torchdevlint.analysis.model import ASSIGN, Binding, ClassInfo, last_name, string_value

# Methods whose override changes what ``.to()`` does to the module's state: such a class may
# move its plain tensors itself.
_MOVING_OVERRIDES = frozenset(("_apply", "to", "cuda"))
_REGISTERING_CALLS = {"register_buffer": "buffers", "register_parameter": "parameters",
                      "add_module": "submodules", "register_module": "submodules"}


@dataclass
class ModuleState:
    """One class's state as torch sees it, by attribute name."""

    info: ClassInfo
    is_module: Optional[bool]  # True: an nn.Module subclass; None: cannot tell
    parameters: Set[str] = field(default_factory=set)
    buffers: Set[str] = field(default_factory=set)
    submodules: Set[str] = field(default_factory=set)
    # ``self.NAME = <tensor>`` that is neither a parameter nor a buffer: the assignments
    tensor_attributes: Dict[str, List[Binding]] = field(default_factory=dict)
    # ``self.NAME = [<module>, ...]`` / ``{k: <module>}`` / comprehensions of modules
    module_containers: Dict[str, List[Binding]] = field(default_factory=dict)
    overrides_moving: bool = False  # defines _apply, to or cuda
    forward_reaches: Set[str] = field(default_factory=set)  # methods forward calls, transitively

    @property
    def registered(self) -> Set[str]:
        return self.parameters | self.buffers | self.submodules


class ModuleClasses:
    """Asked through ``Analysis.module_state``; each class is worked out once."""

    def __init__(self, collected: Collected, kinds: KindInference) -> None:
        self.collected = collected
        self.kinds = kinds
        self._states: Dict[int, ModuleState] = {}

    def state(self, info: ClassInfo) -> ModuleState:
        known = self._states.get(id(info))
        if known is None:
            known = self._states[id(info)] = self._build(info)
        return known

    def _build(self, info: ClassInfo) -> ModuleState:
        state = ModuleState(info, self.kinds.class_is_module(info))
        state.overrides_moving = bool(_MOVING_OVERRIDES & set(info.methods))
        for method, kind in self._registrations(info):
            getattr(state, kind).add(method)
        for name, bindings in info.attributes.items():
            assigned = [b for b in bindings if b.how == ASSIGN and not b.path]
            for binding in assigned:
                value = binding.value
                registered = self._registered_by_value(value, binding)
                if registered is not None:
                    getattr(state, registered).add(name)
        for name, bindings in info.attributes.items():
            if name in state.registered:
                continue
            assigned = [b for b in bindings if b.how == ASSIGN and not b.path]
            tensors = [b for b in assigned if self.kinds.binding_kind(b) is TENSOR]
            if tensors:
                state.tensor_attributes[name] = tensors
            containers = [b for b in assigned if self._holds_modules(b)]
            if containers:
                state.module_containers[name] = containers
        state.forward_reaches = self._reached_from(info, "forward")
        return state

    def _registered_by_value(self, value, binding: Binding) -> Optional[str]:
        """``nn.Parameter(...)`` -> "parameters", ``nn.Buffer(...)`` -> "buffers", a module
        (``nn.Linear(...)``, ``nn.ModuleList(...)``, an instance of a module class) ->
        "submodules"."""
        if isinstance(value, cst.Call):
            callee = last_name(value.func)
            if callee == "Parameter":
                return "parameters"
            if callee == "Buffer":
                return "buffers"
        if self.kinds.is_module(self.kinds.binding_kind(binding)):
            return "submodules"
        return None

    def _registrations(self, info: ClassInfo):
        """(name, kind) for ``self.register_buffer("NAME", ...)`` and its neighbours in the
        class's methods."""
        for method, kind in _REGISTERING_CALLS.items():
            for site in self.collected.calls_by_name.get(method, ()):
                func = site.ctx.func
                call = site.call
                if func is None or func.cls is not info or not isinstance(call.func, cst.Attribute):
                    continue
                owner = call.func.value
                if not (isinstance(owner, cst.Name) and func.param_names
                        and owner.value == func.param_names[0]):
                    continue  # registered on another module, not on self
                name = string_value(call.args[0].value) if call.args else None
                if name is not None:
                    yield name, kind

    def _holds_modules(self, binding: Binding) -> bool:
        value = binding.value
        scope = binding.ctx.scope
        if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
            elements = [e.value for e in value.elements if not isinstance(e, cst.StarredElement)]
        elif isinstance(value, cst.Dict):
            elements = [e.value for e in value.elements if isinstance(e, cst.DictElement)]
        elif isinstance(value, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            elements = [value.elt]
            scope = self._comprehension_scope(value) or scope
        elif isinstance(value, cst.DictComp):
            elements = [value.value]
            scope = self._comprehension_scope(value) or scope
        else:
            return False
        return bool(elements) and all(
            self.kinds.is_module(self.kinds.kind_of(element, scope)) for element in elements)

    def _comprehension_scope(self, comprehension: cst.CSTNode):
        """The scope the traversal made for ``comprehension`` (its names live there)."""
        return next((scope for scope in self.collected.scopes if scope.node is comprehension), None)

    def _reached_from(self, info: ClassInfo, start: str) -> Set[str]:
        """The methods ``start`` calls on ``self``, and those they call, transitively."""
        reached: Set[str] = set()
        pending = [start] if start in info.methods else []
        while pending:
            name = pending.pop()
            if name in reached:
                continue
            reached.add(name)
            method = info.methods[name]
            self_name = method.param_names[0] if method.param_names else None
            if self_name is None:
                continue
            for node in walk_code(method.node.body):
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                        isinstance(node.func.value, cst.Name) and node.func.value.value == self_name \
                        and node.func.attr.value in info.methods:
                    pending.append(node.func.attr.value)
        return reached

