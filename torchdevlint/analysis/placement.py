"""Placement: what a name holds at a given call, judged by the definitions that reach it
(flow-sensitive within the function that owns the name, with loops wrapping around), and
where a model lives: whether a module is moved to an accelerator, with which device
expression, and whether a DataParallel/DDP wrapper scatters its inputs.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst

from torchdevlint import torch_api as api
from torchdevlint.analysis import kinds as K
from torchdevlint.analysis.builder import Collected, iter_children, reads_name, walk_code
from torchdevlint.analysis.devices import Devices, move_device_argument
from torchdevlint.analysis.flow import UNDECIDED, DeviceTrace, OrderedWalk
from torchdevlint.analysis.kinds import KindInference, combine
from torchdevlint.analysis.model import (
    ARITHMETIC_OPERATORS, ASSIGN, AUGMENT, DEF, IMPORT, PARAM, Binding, CallSite, FunctionInfo, Scope,
    for_clauses, is_number,
    keyword_value, last_name, reaching_bindings, source_of, string_value,
)

_WRAPPERS_THAT_SCATTER = api.SCATTERING_WRAPPERS
# Python's list and dict methods that put a value in (the last argument) and that only read
# (``Placement.gives_host_values`` follows what a function fills its containers with)
_LIST_FILLING = frozenset(("append", "insert"))
_CONTAINER_READING = frozenset(("keys", "values", "items", "get", "copy"))
# Methods through which a class decides what its attributes hold: an object that defines one
# is not judged by its assignments (``Placement.object_state``).
_ATTRIBUTE_HOOKS = ("__getattr__", "__setattr__", "__getattribute__")
# Calls of accelerate / Lightning Fabric that prepare a model or loader: they move batches.
_PREPARING_CALLS = frozenset("prepare setup setup_module setup_dataloaders prepare_data_loader".split())
# How a summary of a method (``callees``) names an attribute of the object it runs on, which
# it calls with a parameter's value (``self.model(x)`` is ".model"): ``Placement.argument_for``
# gives the caller's expression for it.
SELF_ATTRIBUTE = "."


class OnAccelerator:
    """Evidence that a value is on an accelerator (or on the device chosen at runtime): the
    call that put it there (a move, a factory given a device, a model moved to a device) and
    the device expression, when the code writes one."""

    __slots__ = ("origin", "device", "given", "built")

    def __init__(self, origin: cst.Call, device: Optional[cst.BaseExpression],
                 given: Optional[cst.BaseExpression] = None,
                 built: Optional[cst.Call] = None) -> None:
        self.origin = origin
        self.device = device
        self.given = given  # the moved model a helper was given (``synthesis(model, ...)``)
        self.built = built  # the constructor call, given ``device=``, of the object whose
        # method made the value (``PSNR(device=device)`` for ``psnr.compute()``)

    def describe(self) -> str:
        """Where the evidence comes from, in the words of a message: "moved by
        `.to(device)`", "created with `device=device`", "the output of `model`, ..."."""
        call, func = self.origin, self.origin.func
        if self.given is not None:
            return (f"the output of `{source_of(func)}`, which was given `{source_of(self.given)}`"
                    ", a model moved to a device")
        if self.built is not None:
            return (f"the result of `{source_of(func)}()`, an object built with "
                    f"`device={source_of(self.device)}`")
        if isinstance(func, cst.Attribute) and func.attr.value == "type" and call.args:
            return f"moved by `.type({source_of(call.args[0].value)})`"  # (a CUDA tensor type)
        if isinstance(func, cst.Attribute) and func.attr.value in api.ACCELERATOR_MOVE_METHODS:
            return f"moved by `.{func.attr.value}({source_of(self.device) if self.device else ''})`"
        if keyword_value(call, "device") is not None:
            return f"created with `device={source_of(self.device)}`"
        return f"the output of `{source_of(func)}`, which was moved to a device"


class PassedOnAccelerator(OnAccelerator):
    """Evidence that a parameter is on an accelerator: every call of its function passes a
    value on one (in this file, and in the project's other files through the index). No
    call of this function is its origin; ``where`` is ``file:line`` of a call in another
    file that proves it, or "" when the calls are all in this file."""

    __slots__ = ("function", "where")

    def __init__(self, function: str, where: str) -> None:
        super().__init__(None, None)
        self.function = function
        self.where = where

    def describe(self) -> str:
        if self.where:
            return f"every call of `{self.function}` passes one on an accelerator, as {self.where} does"
        return f"every call of `{self.function}` passes one on an accelerator"


class StateOfMovedModel(OnAccelerator):
    """Evidence that a parameter or buffer of a model (``model.embedding.weight``) is on an
    accelerator: the model was moved to one (``Placement.state_of_moved_model``). No call
    made the tensor; ``model`` is the moved model's expression."""

    __slots__ = ("model",)

    def __init__(self, model: cst.BaseExpression, device: Optional[cst.BaseExpression]) -> None:
        super().__init__(None, device)
        self.model = model

    def describe(self) -> str:
        return f"a tensor of `{source_of(self.model)}`, a model moved to a device"


class OfMovedParameters(OnAccelerator):
    """Evidence that what a torch function computes from a model's parameters
    (``clip_grad_norm_(model.parameters(), 1.0)``, ``api.PARAMETER_REDUCTIONS``) is on an
    accelerator: the model was moved to one."""

    __slots__ = ("model",)

    def __init__(self, origin: cst.Call, model: cst.BaseExpression,
                 device: Optional[cst.BaseExpression]) -> None:
        super().__init__(origin, device)
        self.model = model

    def describe(self) -> str:
        return (f"computed by `{source_of(self.origin.func)}` from the parameters of "
                f"`{source_of(self.model)}`, a model moved to a device")


class HeldInList(OnAccelerator):
    """Evidence that a list the function built holds a tensor on an accelerator (``preds.
    append(model(x))``): not a tensor itself. What joins it (``torch.cat(preds)``) or takes
    an item (``preds[0]``) is one (``held``), and asked of the list itself, the placement
    says nothing (``placed_at``: NumPy's readers of a list ask its appends, TDL008's
    ``_list_check``)."""

    __slots__ = ()

    @classmethod
    def holding(cls, item: OnAccelerator) -> "HeldInList":
        """A list that holds a tensor ``item`` is evidence of (``held`` undoes it)."""
        return cls(item.origin, item.device, item.given, item.built)

    def held(self) -> OnAccelerator:
        return OnAccelerator(self.origin, self.device, self.given, self.built)


class ReturnedOnAccelerator(OnAccelerator):
    """Evidence that a value is on an accelerator: the plain function of the file that made it
    returns one from every ``return`` (``out = predict(x)`` of ``def predict(x): return
    model(x.to(device))``), for the reason its own evidence (``inner``) gives."""

    __slots__ = ("function", "inner")

    def __init__(self, function: str, inner: OnAccelerator) -> None:
        super().__init__(inner.origin, inner.device, inner.given, inner.built)
        self.function = function
        self.inner = inner

    def describe(self) -> str:
        return f"what `{self.function}()` returns, {self.inner.describe()}"


class StoredOnAccelerator(OnAccelerator):
    """Evidence that ``self.NAME`` is on an accelerator: every method of its class that
    assigns it stores a tensor on one (``Placement.object_state``), as the
    first such store's own evidence (``inner``) says."""

    __slots__ = ("attribute", "method", "inner")

    def __init__(self, attribute: str, method: str, inner: OnAccelerator) -> None:
        super().__init__(inner.origin, inner.device, inner.given, inner.built)
        self.attribute = attribute
        self.method = method
        self.inner = inner

    def describe(self) -> str:
        return f"stored in `self.{self.attribute}` by `{self.method}()`: {self.inner.describe()}"


class OutputOfModuleGivenDeviceInput(OnAccelerator):
    """Evidence that a module's output is on an accelerator: its input is on one
    (``y = generator(x)`` after ``x = x.to(device)``). A module computes where its input is,
    or fails there, whatever its own placement says (amp's ``initialize`` and other wrappers
    that hand back the model leave the model's own evidence unknown). ``inner`` is the
    input's evidence."""

    __slots__ = ("inner", "argument")

    def __init__(self, origin: cst.Call, given: cst.BaseExpression, inner) -> None:
        super().__init__(origin, getattr(inner, "device", None))
        self.argument = given
        self.inner = inner

    def describe(self) -> str:
        why = f" ({self.inner.describe()})" if isinstance(self.inner, OnAccelerator) else ""
        return (f"the output of `{source_of(self.origin.func)}` given `{source_of(self.argument)}`"
                f", which is on a device{why}")


class OnModuleDevice(OnAccelerator):
    """Evidence that a value computed in a method of an ``nn.Module`` class is on an
    accelerator: the module's own state makes it (``self.net(obs)``, ``self.weight``), so it
    is where the module is, and something shows that the module meets an accelerator
    (``shown``: the file or the project moves it, or it is a library class). ``origin`` is the
    expression itself, not a call that placed it."""

    __slots__ = ("module", "shown")

    def __init__(self, expr: cst.BaseExpression, module: str, shown: str) -> None:
        super().__init__(expr, None)
        self.module = module
        self.shown = shown

    def describe(self) -> str:
        return f"computed from the state of the module `{self.module}`; {self.shown}"


def updates_itself(value, self_name: Optional[str], name: str) -> bool:
    """``self.total + x`` for ``self.total``: arithmetic with the attribute itself, which
    keeps it where it is (or fails there)."""
    if type(value) is not cst.BinaryOperation or not self_name:
        return False
    return any(type(side) is cst.Attribute and side.attr.value == name and
               type(side.value) is cst.Name and side.value.value == self_name
               for side in (value.left, value.right))


def _held(found):
    """The evidence of what a list holds, for a value taken from it (an item, a join)."""
    return found.held() if isinstance(found, HeldInList) else found


class CopiedByTwin(OnAccelerator):
    """Evidence that a parameter is on an accelerator: a twin of its function (another
    top-level function with the same parameters, in this file or beside it in the project)
    copies the parameter of that name to the host before converting it
    (``y_targets.cpu().numpy()``): the code that calls both gives them device tensors
    (issue 28: ignite's ``roc_auc_curve_compute_fn`` beside ``roc_auc_compute_fn``).
    ``where`` is the twin's ``file:line`` in another file, or "" in this file."""

    __slots__ = ("function", "parameter", "where")

    def __init__(self, function: str, parameter: str, where: str) -> None:
        super().__init__(None, None)
        self.function = function
        self.parameter = parameter
        self.where = where

    def describe(self) -> str:
        at = f" in {self.where}" if self.where else ""
        return (f"`{self.function}`{at}, a function of the same parameters, copies "
                f"`{self.parameter}` to the host with `.cpu()` before converting it")


class OnCPU:
    """Evidence that a tensor is on the CPU: the call that put it there (a factory without a
    device, ``.cpu()``, ``.to("cpu")``, ``torch.from_numpy``)."""

    __slots__ = ("origin",)

    def __init__(self, origin: cst.Call) -> None:
        self.origin = origin


class _FromParameter(OnCPU):
    """The value of a parameter, followed through a function's body by the summary of what
    the function does with its parameters (``callees.Callees``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        super().__init__(None)
        self.name = name


class PassedOnCPU(OnCPU):
    """Evidence that a parameter is a tensor on the CPU: every call of its function (a
    method's calls through instances of its class: ``tracker.match(bboxes, labels)``) passes
    one, in this file; ``origin`` is where the first call's value was put there."""

    __slots__ = ("function",)

    def __init__(self, origin: cst.Call, function: str) -> None:
        super().__init__(origin)
        self.function = function


# Libraries whose functions given a model say nothing of where their result lives: torch's
# own are judged as torch functions, NumPy's give arrays.
_LIBRARIES_OF_KNOWN_RESULTS = ("torch.", "numpy.")

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


# A trace that knows no value's device: what a call is evidence of by itself.
_KNOWS_NO_VALUE = DeviceTrace()


# Where names may be bound anew: a read there is no evidence of the enclosing placement
_NO_EVIDENCE_INSIDE = frozenset((cst.Lambda, cst.FunctionDef) + _COMPREHENSIONS)
_COMPREHENSION_TYPES = frozenset(_COMPREHENSIONS)


class _AcceleratorWalk(OrderedWalk):
    """One function's body (or the module's), in the order it runs: records, for every name
    read, whether its value was on an accelerator (``side`` "accelerator") or on the CPU
    (``side`` "cpu") at that read."""

    def __init__(self, placement: "Placement", scope: Scope, at: Dict[int, object],
                 side: str = "accelerator") -> None:
        super().__init__()
        self.placement = placement
        self.scope = scope
        self.at = at
        self.side = side

    def expression(self, expr) -> None:
        stack = [expr]
        placed, at = self.placed, self.at
        while stack:
            node = stack.pop()
            cls = type(node)  # (not ``isinstance``: libcst's ABCs made it 0.8 s on torch)
            if cls is cst.Name:
                at[id(node)] = placed.get(node.value)
            elif cls is cst.Attribute:
                key = _attribute_key(node)
                if key is not None and key in placed:
                    at[id(node)] = placed[key]
                elif node.attr.value in api.MODULE_STATE_ATTRIBUTES and self.side == "accelerator":
                    found = self.model_state(node, self._order_of(expr))
                    at[id(node)] = None if found is UNDECIDED else found
            elif cls in _NO_EVIDENCE_INSIDE:
                if cls in _COMPREHENSION_TYPES:
                    self._comprehension(node, stack)
                continue  # names there may be bound there: no evidence inside
            stack.extend(iter_children(node))

    def _comprehension(self, node, stack: list) -> None:
        """``[o.numpy() for o in outs]`` over a list the function filled with tensors on an
        accelerator (``HeldInList``): the target is one of those items where the element reads
        it (issue 28: outputs collected batch by batch, converted one by one). Its iterable
        is read in the enclosing code; nothing else inside is evidence (names there may be
        bound there)."""
        for_in = node.for_in
        stack.append(for_in.iter)
        if type(node) is not cst.GeneratorExp:
            self._free_names(node)
        if self.side != "accelerator" or for_in.inner_for_in is not None:
            return
        state = self._model_tensors(for_in.target, for_in.iter)
        if state is not None:
            item, name = state
        elif not isinstance(for_in.target, cst.Name):
            return
        else:
            found = self.device_of(for_in.iter)
            if not isinstance(found, HeldInList):
                return
            item, name = found.held(), for_in.target.value
        elements = [node.key, node.value] if isinstance(node, cst.DictComp) else [node.elt]
        for element in elements:
            for inner in walk_code(element):
                if type(inner) is cst.Name and inner.value == name:
                    self.at[id(inner)] = item

    def _free_names(self, node) -> None:
        """The names a list, set or dict comprehension's element reads that it does not bind
        hold what they hold where it runs (it runs there, at once; a generator runs later):
        MPRNet's ``np.sum([criterion(restored[j], target) for j in range(len(restored))])``
        of a moved model's outputs (issue 28). The names it binds give no evidence."""
        bound = {name.value for inner in walk_code(node) if type(inner) in _COMPREHENSION_TYPES
                 for for_in in for_clauses(inner.for_in)
                 for name in walk_code(for_in.target) if type(name) is cst.Name}
        elements = [node.key, node.value] if type(node) is cst.DictComp else [node.elt]
        placed, at = self.placed, self.at
        for element in elements:
            for inner in walk_code(element):
                if type(inner) is cst.Name and inner.value not in bound and inner.value in placed:
                    at[id(inner)] = placed[inner.value]

    def loop_target(self, target, iterable) -> None:
        """``for o in outs:`` over a list the function filled with tensors on an accelerator
        (``HeldInList``): each item is one of them. ``for k, loss in out["loss"].items():``
        (or ``.values()``) over a dict a moved model gave, or that holds what it gave: each
        value is one (a model's dict of outputs is taken item by item as its subscripts are;
        the Scene-Text-Recognition-Recommendations evaluator sums its losses so, issue 28)."""
        found = self.device_of(iterable) if self.side == "accelerator" else None
        if isinstance(target, cst.Name) and isinstance(found, HeldInList):
            self.place(target.value, found.held())
            return
        state = self._model_tensors(target, iterable) if self.side == "accelerator" else None
        if state is not None:
            self.unbind(target)
            self.place(state[1], state[0])
            return
        self.unbind(target)
        if self.side == "accelerator":
            # ``for i, sims in enumerate(sims_matrix)`` of a tensor on an accelerator: each
            # row is there too (BLIP's retrieval, whose ``sims.topk(k)`` indices then index
            # the features it kept on the CPU), through ``enumerate`` and ``zip``
            for name, path in target_paths(target):
                rows = loop_item_source(iterable, path)
                held = self.device_of(rows) if rows is not None else None
                if held and not isinstance(held, HeldInList) and \
                        self.placement.kinds.kind_of(rows, self.scope) is K.TENSOR:
                    self.place(name, held)
        if self.side != "accelerator" or type(iterable) is not cst.Call or iterable.args or \
                type(iterable.func) is not cst.Attribute or \
                iterable.func.attr.value not in ("items", "values"):
            return
        value = target
        if iterable.func.attr.value == "items":
            if type(target) not in (cst.Tuple, cst.List) or len(target.elements) != 2:
                return
            value = target.elements[1].value
        if type(value) is not cst.Name:
            return
        held = self.device_of(iterable.func.value)
        if held:
            self.place(value.value, _held(held))

    def in_place_update(self, statement: cst.AugAssign) -> None:
        """``loss += value`` reads ``loss`` as well: an in-place operation of two tensors
        (TDL011 asks where its target is). On the accelerator's side, a name the walk has not
        placed (a number: ``total = 0.``) given a tensor on an accelerator holds one after it
        (``total += out.mean()``), and a list the function built (``targets += out``) holds
        its rows (issue 28: an evaluator sums each batch's losses, then NumPy reads them)."""
        self.expression(statement.target)
        self.expression(statement.value)
        target = statement.target
        if self.side != "accelerator" or type(target) is not cst.Name or \
                self.placed.get(target.value) is not None:
            return
        found = self.device_of(statement.value)
        if not found or isinstance(found, HeldInList):
            return
        bindings = self._reaching_update(target, statement)
        if bindings and all(b.how == ASSIGN and not b.path and _builds_a_container(b.value)
                            for b in bindings):
            if isinstance(statement.operator, cst.AddAssign):
                self.place(target.value, HeldInList.holding(found))
        elif bindings and all(b.how == ASSIGN and not b.path and is_number(b.value)
                              for b in bindings):
            self.place(target.value, found)

    def _reaching_update(self, target: cst.Name, statement: cst.AugAssign) -> list:
        """The assignments of ``target`` (not its other updates) that may hold when
        ``statement`` updates it: those before it, and those after it in the loop around it
        (the next pass). Not one after that loop: SANet's ``mse = 0``, ``mse += err * err``
        over the patches, then ``mse = np.sqrt(mse / n)`` (issue 28)."""
        bindings = self.scope.bindings.get(target.value, ())
        update = next((b for b in bindings if b.how == AUGMENT and b.node is target), None)
        if update is None:
            return [b for b in bindings if b.how != AUGMENT]
        later = [b for b in bindings if b.how != AUGMENT and b.order > update.order]
        if later and self.loop is not None:
            inside = {id(node) for node in walk_code(self.loop)}
            later = [b for b in later if id(b.node) in inside]
        elif later:
            later = []
        return [b for b in bindings if b.how != AUGMENT and b.order < update.order] + later

    def assign(self, target, value, statement) -> None:
        """Besides names: ``self.scores = torch.zeros(n, device=d)`` places ``self.scores``
        for what the same function reads of it afterwards (issue 28: ganomaly's ``test()``
        fills its score tensors and hands them on); ``outs[i] = model(x)`` into a list or
        dict the function built itself places the container (its items are read as
        ``outs[j]``: PatchmatchNet's ``gt_depths[i] = F.interpolate(depth_gt, ...)``)."""
        super().assign(target, value, statement)
        if isinstance(target, cst.Attribute):
            key = _attribute_key(target)
            if key is not None:
                self.place(key, self.device_of(value))
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            name = target.value.value
            if self.placed.get(name) is None and self._is_container(name):
                self.place(name, self.device_of(value))

    def call_statement(self, call: cst.Call) -> None:
        """``preds.append(model(x))`` into a list the function built itself: the list holds
        a tensor on an accelerator, and so does what joins it (``torch.cat(preds)``, issue
        28: outputs collected batch by batch, joined and handed to NumPy). The accelerator's
        side only: the CPU's is asked of every append where a list is joined
        (``appended_to``)."""
        super().call_statement(call)
        func = call.func
        if self.side != "accelerator" or not isinstance(func, cst.Attribute) or \
                func.attr.value != "append" or not isinstance(func.value, cst.Name) or \
                len(call.args) != 1 or call.args[0].star or call.args[0].keyword is not None:
            return
        name = func.value.value
        # (bound to a list by the function; ``preds = torch.cat(preds)`` may rebind it later)
        if self.placed.get(name) is None and any(
                binding.how == ASSIGN and not binding.path and _builds_a_container(binding.value)
                for binding in self.scope.bindings.get(name, ())):
            found = self.device_of(call.args[0].value)
            if found:
                self.place(name, HeldInList.holding(found))

    def device_of(self, expr):
        if type(expr) is cst.ListComp:
            return self._list_of(expr) if self.side == "accelerator" else None
        found = super().device_of(expr)
        if isinstance(expr, cst.Subscript):
            if found and self.side == "cpu" and self._indexed_on_accelerator(expr):
                # ``torch.eye(n)[labels]`` of moved labels fails at the indexing (TDL011
                # reports it there): what it would give is on no side
                return None
            return _held(found)  # ``preds[0]``: an item of the list
        return found

    def _indexed_on_accelerator(self, subscript: cst.Subscript) -> bool:
        """One of ``subscript``'s indices is on an accelerator (as ``on_accelerator`` says)."""
        for element in subscript.slice:
            index = element.slice
            if isinstance(index, cst.Index) and isinstance(
                    index.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and \
                    self.placement.on_accelerator(index.value, self.scope) is not None:
                return True
        return False

    def _list_of(self, comprehension: cst.ListComp):
        """``[model(x_i) for _ in range(n)]``: a list of tensors on an accelerator
        (``HeldInList``) where its element is one and reads no name the comprehension binds
        (a bound name's value is not the enclosing code's)."""
        bound = {node.value for for_in in for_clauses(comprehension.for_in)
                 for node in walk_code(for_in.target) if type(node) is cst.Name}
        if any(type(node) is cst.Name and node.value in bound
               for node in walk_code(comprehension.elt)):
            return None
        found = self.device_of(comprehension.elt)
        if not found or isinstance(found, HeldInList):
            return None
        return HeldInList.holding(found)

    def _is_container(self, name: str) -> bool:
        """A name of this function bound only to lists or dicts it builds (``[None] * n``,
        ``[torch.empty(0)] * 4``, ``{}``, ``list()``): storing an item there leaves the
        item where it is. (Item assignment into a tensor copies into that tensor.)"""
        bindings = self.scope.bindings.get(name, ())
        return bool(bindings) and all(
            binding.how == ASSIGN and not binding.path and _builds_a_container(binding.value)
            for binding in bindings)

    def attribute_device(self, attribute: cst.Attribute):
        key = _attribute_key(attribute)
        if key is not None and key in self.placed:
            return self.placed[key]
        return self.model_state(attribute, None)

    def model_state(self, attribute: cst.Attribute, order: Optional[int]):
        """``model.embedding.weight``, ``model[0].bias``: a parameter or buffer of a moved
        model (``Placement.state_of_moved_model``, moved before ``order`` where known) is on
        the accelerator; UNDECIDED for anything else."""
        if self.side != "accelerator" or attribute.attr.value not in api.MODULE_STATE_ATTRIBUTES:
            return UNDECIDED
        found = self.placement.state_of_moved_model(attribute, self.scope, order)
        return UNDECIDED if found is None else found

    def _model_tensors(self, target, iterable):
        """``for p in model.parameters()``, ``for name, p in model.named_parameters()``,
        ``for k, v in model.state_dict().items()`` of a model moved before: (the evidence,
        the name that holds each tensor), or None."""
        if type(iterable) is not cst.Call or type(iterable.func) is not cst.Attribute:
            return None
        method, owner = iterable.func.attr.value, iterable.func.value
        if method in ("items", "values") and type(owner) is cst.Call and \
                type(owner.func) is cst.Attribute and owner.func.attr.value == "state_dict":
            method, owner = ("named_parameters" if method == "items" else "parameters"), \
                owner.func.value
        if method in api.MODULE_TENSOR_ITERATORS and type(target) is cst.Name:
            name = target.value
        elif method in api.MODULE_NAMED_TENSOR_ITERATORS and \
                type(target) in (cst.Tuple, cst.List) and len(target.elements) == 2 and \
                type(target.elements[1].value) is cst.Name:
            name = target.elements[1].value.value
        else:
            return None
        model = self.placement.moved_model(owner, self.scope, before=self._order_of(iterable))
        if model is None:
            return None
        return StateOfMovedModel(model[0], model[1]), name

    def _order_of(self, expr) -> Optional[int]:
        """The source order of the code ``expr`` is in, from a call in it; None without one."""
        for node in walk_code(expr):
            if type(node) is cst.Call:
                site = self.placement.collected.site_of(node)
                if site is not None:
                    return site.order
        return None

    def unpacked(self, targets, value: cst.BaseExpression) -> None:
        """``values, idx = out.max(1)``, ``out, hidden = lstm(x)`` of a value placed (on an
        accelerator, or on the CPU): each name holds a part of it, there. Where ``kinds``
        knows the parts (a tuple), only the tensors among them; the output of a helper given
        a moved model may hold numbers beside tensors: only when ``kinds`` says a tensor."""
        if self.unpacked_parts(targets, value):
            return
        super().unpacked(targets, value)
        found = self.device_of(value)
        if not found:
            return
        kind = self.placement.kinds.kind_of(value, self.scope)
        if isinstance(kind, K.TupleKind):
            items = kind.items
        elif kind is K.TENSOR or getattr(found, "given", None) is None:
            items = (K.TENSOR,) * len(targets)
        else:
            return
        for position, (target, item) in enumerate(zip(targets, items)):
            if isinstance(target, cst.Name) and item is K.TENSOR and not (
                    self.side == "accelerator"
                    and self.placement.project_numbers_at(value, self.scope, position)):
                # (``loss, den, conn = model.compute_loss(g)`` of a class of another file
                # that returns ``loss, den.item(), conn.item()``: two numbers)
                self.place(target.value, found)

    def unpacked_parts(self, targets, value: cst.BaseExpression) -> bool:
        """``h0, c0 = self.init_hidden(n)`` where the method returns a tuple display of as
        many elements: each name holds what its element held there (issue 28: the LSTM's
        initial state made in a helper that ``forward`` calls)."""
        parts = self.placement.returned_parts(value, self.scope, len(targets)) \
            if self.side == "cpu" else None
        if parts is None:
            return False
        for target, (part, scope) in zip(targets, parts):
            if isinstance(target, cst.Name):
                self.place(target.value, self.placement.placed_at(part, scope, self.side))
            else:
                self.unbind(target)
        return True

    def call_device(self, call: cst.Call):
        if self.side == "cpu":
            own = self.placement.method_called(call, self.scope)
            if own is not None:
                return self.placement.returned(own, self.side)
            return self.placement.call_on_cpu(call, self.scope, self)
        return self.placement.call_on_accelerator(call, self.scope, self)


class _PointTrace(_AcceleratorWalk):
    """Evaluates an expression with its names as the walk found them where they are read."""

    def name_device(self, name: cst.Name):
        return self.at.get(id(name))

    def attribute_device(self, attribute: cst.Attribute):
        return self.at.get(id(attribute), UNDECIDED)


def _class_level_values(cls, name: str) -> list:
    """The values a class body assigns to ``name`` itself (``device = "cuda"``; not an
    annotated field, which a dataclass's constructor may replace)."""
    body = cls.node.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else ()
    return [small.value for line in statements if isinstance(line, cst.SimpleStatementLine)
            for small in line.body if isinstance(small, cst.Assign)
            and any(isinstance(t.target, cst.Name) and t.target.value == name
                    for t in small.targets)]


def _attribute_key(attribute: cst.Attribute) -> Optional[str]:
    """``self.scores`` -> "self.scores": an attribute of a plain name, which a walk may place
    as it places names; None for any other attribute (``a.b.c``, ``f().x``)."""
    if isinstance(attribute.value, cst.Name):
        return f"{attribute.value.value}.{attribute.attr.value}"
    return None


def _builds_a_container(value) -> bool:
    """``[...]``, ``{...}``, ``[x] * n``, ``list()``, ``dict()``: a new list or dict."""
    if isinstance(value, (cst.List, cst.Dict)):
        return True
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        return isinstance(value.left, cst.List) or isinstance(value.right, cst.List)
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and \
        value.func.value in ("list", "dict") and not value.args



class Placement:
    """Asked through ``Analysis.reaching_bindings`` / ``Analysis.kind_at`` /
    ``Analysis.on_accelerator``."""

    def __init__(self, collected: Collected, kinds: KindInference,
                 devices: Callable[[], Devices], project: Callable[[], object] = lambda: None,
                 is_loss: Callable[[cst.BaseExpression, Scope], bool] = lambda func, scope: False,
                 weighted_submodule: Callable[[object, str], bool] = lambda info, name: False
                 ) -> None:
        self.collected = collected
        # whether ``self.NAME`` of a module class is a registered submodule with weights
        # (``Analysis._weighted_submodule``): moved with its model
        self._weighted_submodule = weighted_submodule
        # the one answer to "is calling this a loss" (``Analysis.is_loss``): a loss given a
        # tensor on an accelerator computes there (``loss = criterion(out, y)``)
        self._is_loss = is_loss
        # the project's other files (``project_index.ProjectView``), asked for the calls of a
        # top-level function made there
        self._project = project
        # model key -> ``file:line`` of a call in another file that passes a moved model
        self._caller_evidence: Dict[tuple, str] = {}
        # id(function scope) -> {parameter: evidence} (``parameters_on_accelerator``)
        self._parameters: Dict[int, Dict[str, OnAccelerator]] = {}
        self._cpu_parameters: Dict[int, Dict[str, OnCPU]] = {}
        # (id(class), side) -> {attribute: evidence} (``object_state``)
        self._object_state: Dict[tuple, Dict[str, object]] = {}
        self.kinds = kinds
        self._devices = devices  # built only when a model's move is judged
        self._bare_moves: Optional[Dict[tuple, List[tuple]]] = None
        self._taken_back: Dict[tuple, List[int]] = {}  # (filled with ``_bare_moves``)
        # model keys of DataParallel/DDP wrappers, learnt while answering ``moved_model``
        self._scattering: set = set()
        # id(scope) -> {name: the names bound to it there, ``net = model``} (``_aliases``)
        self._alias_table: Dict[int, Dict[str, List[str]]] = {}
        self._receiver_attributes: Dict[tuple, cst.Attribute] = {}  # (``argument_for``)
        # id(function node or module) -> {id(Name read): evidence}: each body walked once,
        # on the first question about it
        self._walked: Dict[int, Dict[int, object]] = {}
        self._constants: Optional[Dict[str, object]] = None  # (``module_constants_on_cpu``)
        self._default_device: Optional[Tuple[bool, set]] = None
        # (side, id(function node)) -> its returns' evidence (``_every_return``)
        self._returns: dict = {}
        # id(function node) -> whether it returns only host values (``gives_host_values``);
        # False while asked (a recursive function: no proof from itself)
        self._host_values: Dict[int, bool] = {}
        self._returning: set = set()  # (method, side) whose returns are being placed
        # (parameter names, parameter) -> the top-level function of this file that copies
        # that parameter to the host before converting it (``copied_by_twin``)
        self._host_copies: Optional[Dict[Tuple[tuple, str], str]] = None

    @property
    def devices(self) -> Devices:
        return self._devices()

    def _moves(self) -> Dict[tuple, List[tuple]]:
        if self._bare_moves is None:
            self._bare_moves = self._collect_bare_moves()
        return self._bare_moves

    def reaching_bindings(self, name: str, site: CallSite):
        """The bindings of ``name`` that can reach ``site`` (``model.reaching_bindings``)."""
        return reaching_bindings(name, site)

    def kind_at(self, expr: cst.BaseExpression, site: CallSite):
        """The kind of ``expr`` where ``site`` is: a name is judged by the definitions that
        reach the call, not by every assignment in its function."""
        if isinstance(expr, cst.Name):
            reaching = self.reaching_bindings(expr.value, site)
            if reaching:
                return combine(self.kinds.binding_kind(b) for b in reaching)
        return self.kinds.kind_of(expr, site.ctx.scope)

    # -- where a tensor lives at a point ----------------------------------------------

    def on_accelerator(self, expr: cst.BaseExpression, scope: Scope) -> Optional[OnAccelerator]:
        """Evidence that ``expr``'s value is on an accelerator where ``expr`` is: it was
        moved there (``x.to(device)``, ``x.cuda()``), created there (``torch.zeros(n,
        device=device)``), is the output of a model moved there, or is computed from such a
        value by tensor methods and torch functions. Names are judged flow-sensitively in
        the function that reads them (``x = x.cpu()`` takes ``x`` off); a name bound in a
        comprehension, a lambda or an enclosing function gives no evidence. A device chosen
        at runtime counts: the code is written to run on an accelerator."""
        return self.placed_at(expr, scope, "accelerator")

    def on_cpu(self, expr: cst.BaseExpression, scope: Scope) -> Optional[OnCPU]:
        """Evidence that ``expr``'s value is a tensor on the CPU where ``expr`` is: created
        there (a torch factory without ``device=``, or with the CPU), brought there
        (``.cpu()``, ``.to("cpu")``), or computed from such tensors by tensor methods,
        arithmetic (with numbers or other CPU tensors) and torch functions whose tensor
        arguments are all on the CPU. Judged as ``on_accelerator`` judges: flow-sensitive
        within the function that reads the names."""
        return self.placed_at(expr, scope, "cpu")

    # -- what a method of the same class returns ---------------------------------------

    def method_called(self, call: cst.Call, scope: Scope) -> Optional[FunctionInfo]:
        """The method of this file that ``call`` runs (``method_run``), when its body's
        ``return``s give what it returns (not a generator, nor decorated)."""
        method = self.method_run(call, scope)
        if method is None or method.opaque_return or method.scope is None \
                or method.self_name is None or not method.returns:
            return None
        return method

    def method_run(self, call: cst.Call, scope: Scope) -> Optional[FunctionInfo]:
        """The method of this file that ``call`` runs: ``self.NAME(...)`` in a method of a
        class that defines ``NAME`` (itself or a base class of this file: issue 28), or a call
        of an instance of an ``nn.Module`` class of this file
        (``self.ssim(y_hat, y)`` where ``self.ssim = SSIMLoss()``), which runs its ``forward``
        (unless the class defines ``__call__``), or ``obj.NAME(...)`` on an instance of a
        class of this file that defines ``NAME`` (``model.init_hidden(n)``,
        ``stopper.step(acc, model)``)."""
        func = call.func
        owner = scope.code_owner().func
        method = None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and owner is not None and owner.cls is not None \
                and owner.self_name == func.value.value:
            method = self.kinds.find_method(owner.cls, func.attr.value)
            if method is None:
                # ``self._forward(x)`` in a base class that leaves ``_forward`` to its
                # subclasses: where one class of the file that derives from it defines it,
                # the object this runs on is of that class (or it could not call it)
                defining = [other.methods[func.attr.value]
                            for other in self.kinds.derived_classes(owner.cls)
                            if func.attr.value in other.methods]
                method = defining[0] if len(defining) == 1 else None
        if method is None and isinstance(func, (cst.Name, cst.Attribute)):
            kind = self.kinds.kind_of(func, scope)
            if isinstance(kind, K.Instance) and self.kinds.class_is_module(kind.info) \
                    and self.kinds.find_method(kind.info, "__call__") is None:
                method = self.kinds.find_method(kind.info, "forward")
        if method is None and isinstance(func, cst.Attribute):
            # ``model.init_hidden(n)`` on an instance of a class of this file (issue 28: the
            # LSTM's initial state made in a training loop and handed to the moved model)
            kind = self.kinds.kind_of(func.value, scope)
            if isinstance(kind, K.Instance):
                method = self.kinds.find_method(kind.info, func.attr.value)
        return method

    def returned(self, method: FunctionInfo, side: str):
        """The evidence for what ``method`` may return: the first ``return`` of it that
        gives a value placed on ``side`` (as the walk of a body judges a name after an ``if``
        that may have placed it: ``if hidden is None: return torch.zeros(n)``), else None."""
        key = (id(method.node), side)
        if key in self._returning:
            return None  # (methods that call each other: no evidence from themselves)
        self._returning.add(key)
        try:
            return next((found for found in (self._placed_or_all(value, ctx.scope, side)
                                             for value, ctx in method.returns if value is not None)
                         if found), None)
        finally:
            self._returning.discard(key)

    def _placed_or_all(self, value, scope: Scope, side: str):
        """``placed_at``; for a tuple display (``return h0, c0``: an LSTM's initial state,
        handed on whole, issue 28), the evidence of its first element when every element is
        placed on ``side``."""
        if isinstance(value, (cst.Tuple, cst.List)) and value.elements and not any(
                isinstance(e, cst.StarredElement) for e in value.elements):
            each = [self.placed_at(e.value, scope, side) for e in value.elements]
            return each[0] if all(each) else None
        return self.placed_at(value, scope, side)

    def gives_a_tuple(self, expr, scope: Scope):
        """(the method, the CPU factory calls of its tuple) when ``expr`` is (a name bound
        to) the call of a method or a plain function of this file that returns a tuple
        display (``hidden = model.init_hidden(n)``: ``return h0, c0``): no tensor, so no
        tensor method (``.to()``) applies to it; else None."""
        values = [expr] if not isinstance(expr, cst.Name) else [
            value for value, _, path, _ in self.bindings_of(expr, scope) if not path]
        for value in values:
            method = None
            if isinstance(value, cst.Call):
                # (``hidden = init_hidden(n)``: a plain function of the file, too)
                method = self.method_called(value, scope) or self.helper_called(value, scope)
            if method is None:
                continue
            tuples = [(returned, ctx) for returned, ctx in method.returns
                      if isinstance(returned, (cst.Tuple, cst.List))]
            if not tuples:
                continue
            calls = []
            for returned, ctx in tuples:
                for element in returned.elements:
                    found = None if isinstance(element, cst.StarredElement) else \
                        self.on_cpu(element.value, ctx.scope)
                    origin = found.origin if found is not None else None
                    made = _torch_function(origin, self.kinds.qualname(origin.func, ctx.scope)) \
                        if isinstance(origin, cst.Call) else None
                    if made is not None and made[1] is None and made[0] in api.FACTORIES \
                            and all(origin is not c for c in calls):
                        calls.append(origin)
            return method, calls
        return None

    def returned_parts(self, value, scope: Scope, count: Optional[int]):
        """[(element, its scope)] of the tuple every ``return`` of the method ``value`` calls
        gives, when there is one return of a display (of ``count`` elements, when given);
        else None."""
        if not isinstance(value, cst.Call):
            return None
        method = self.method_called(value, scope)
        if method is None or len(method.returns) != 1:
            return None
        returned, ctx = method.returns[0]
        if not isinstance(returned, (cst.Tuple, cst.List)) \
                or (count is not None and len(returned.elements) != count) \
                or any(isinstance(e, cst.StarredElement) for e in returned.elements):
            return None
        return [(e.value, ctx.scope) for e in returned.elements]

    def placed_at(self, expr: cst.BaseExpression, scope: Scope, side: str):
        """The evidence for ``expr`` where it is, on ``side`` (an ``OnAccelerator`` or an
        ``OnCPU``), or None."""
        found = self._placed_at(expr, scope, side)
        wanted = OnCPU if side == "cpu" else OnAccelerator
        if isinstance(found, HeldInList):
            return None  # a list, not a tensor
        return found if isinstance(found, wanted) else None

    def _placed_at(self, expr: cst.BaseExpression, scope: Scope, side: str):
        scope = scope.code_owner()
        if scope.kind == "function" and scope.func is not None:
            body, key = scope.func.node.body, (id(scope.func.node), side)
        elif scope.kind == "module":
            body, key = None, (id(scope), side)
        else:
            return None
        at = self._walked.get(key)
        if at is None:
            at = self._walked[key] = {}
            self._walk(scope, body, at, side, object_state=True)
        return _PointTrace(self, scope, at, side).device_of(expr)

    def _walk(self, scope: Scope, body, at: Dict[int, object], side: str,
              object_state: bool) -> None:
        """Walks a function's ``body`` (the module's code where None) into ``at``, its
        parameters placed as their callers place them, and, with ``object_state``, the
        attributes of ``self`` that the methods of its class store on ``side``
        (``object_state``)."""
        walk = _AcceleratorWalk(self, scope, at, side)
        if body is not None and side == "cpu":
            walk.placed.update(self.module_constants_on_cpu(scope))
        if body is not None and object_state:
            walk.placed.update(self.object_state(scope, side))
        if body is not None:
            walk.placed.update(self.parameters_on_accelerator(scope) if side == "accelerator"
                               else self.parameters_on_cpu(scope))
        if body is None:
            walk.walk(scope.node.body)  # the module
        elif isinstance(body, cst.IndentedBlock):
            walk.walk(body.body)
        else:
            walk._suite(body)

    def object_state(self, scope: Scope, side: str) -> Dict[str, object]:
        """``self.NAME`` (by the walk's key, "self.NAME") for each attribute of the object a
        method ``scope`` runs on that its class keeps on ``side`` ("accelerator" or "cpu"):
        a class that is no ``nn.Module`` (a module's state moves with ``.to()``: ``modules``
        judges it) and has no ``__getattr__`` / ``__setattr__``, every assignment of the
        attribute in its methods (``self.NAME = value``; ``None`` placeholders and updates
        that combine the attribute itself, ``self.total = self.total + x``, aside) stores a
        tensor on that side where it is made, as that method's own walk places it (issue
        28: a runner's ``step()`` keeps ``self.loss = criterion(out, y)`` of its moved model
        and its ``report()`` hands ``self.loss.data`` to NumPy; a metric builds ``self.mat =
        torch.zeros(n, n)`` in ``__init__`` and its ``update(target, pred)`` adds counts of
        the device tensors it is given). The method reading it sees that value until it
        assigns the attribute itself (the walk is flow-sensitive)."""
        func = scope.func
        if func is None or func.cls is None or not func.self_name:
            return {}
        cls = func.cls
        key = (id(cls), side)
        known = self._object_state.get(key)
        if known is None:
            known = self._object_state[key] = self._stored(cls, side)
        return {f"{func.self_name}.{name}": found for name, found in known.items()}

    def _stored(self, cls, side: str) -> Dict[str, object]:
        chain = list(self.kinds.class_chain(cls))  # (its base classes of this file too)
        if self.kinds.class_is_module(cls) is not False or any(
                name in other.methods for other in chain for name in _ATTRIBUTE_HOOKS):
            return {}
        walks: Dict[int, Dict[int, object]] = {}  # (each method walked once, without seeds)
        found: Dict[str, object] = {}
        wanted = OnAccelerator if side == "accelerator" else OnCPU
        members = {id(other) for other in chain}
        for name in dict.fromkeys(name for other in chain for name in other.attributes):
            evidence = None
            for binding in self.kinds.attribute_bindings(cls, name):
                method = binding.ctx.func
                value = binding.value
                if binding.how != ASSIGN or binding.path or value is None or method is None \
                        or id(method.cls) not in members or method.scope is None:
                    evidence = None
                    break
                if (type(value) is cst.Name and value.value == "None") or \
                        updates_itself(value, method.self_name, name):
                    continue
                at = walks.get(id(method))
                if at is None:
                    at = walks[id(method)] = {}
                    self._walk(method.scope, method.node.body, at, side, object_state=False)
                placed = _PointTrace(self, method.scope, at, side).device_of(value)
                if not isinstance(placed, wanted) or isinstance(placed, HeldInList) or (
                        side == "accelerator" and self._device_given(placed, method)):
                    # (``self.total = torch.zeros((), device=device)`` of ``__init__(self,
                    # device="cpu")``: each construction decides, ``_method_of_device_object``)
                    evidence = None
                    break
                if evidence is None:
                    evidence = StoredOnAccelerator(name, method.name, placed) \
                        if side == "accelerator" else placed
            if evidence is not None:
                found[name] = evidence
        return found

    def module_constants_on_cpu(self, scope: Scope) -> Dict[str, object]:
        """The module's names that a function ``scope`` reads as module globals and that hold
        a CPU tensor: bound once, at module level, to one (``MEAN = torch.tensor([0.485,
        0.456, 0.406]).view(1, 3, 1, 1)``), never declared ``global`` by a function (which
        may rebind it), and not bound by the function or a function around it. A function
        runs after the module's code, so it reads that tensor (issue 28: normalisation
        constants subtracted from the images a caller moved to the GPU)."""
        module = scope.module()
        if self._constants is None:
            rebound = set().union(*(s.global_names for s in self.collected.scopes))
            self._constants = {}
            # (each value judged alone, reading no other name: a walk of the module's code
            # for its CPU side cost 18 s of a 96 s profile of torch's testing, _dynamo,
            # distributed and nn, whose module-level code is large)
            alone = _AcceleratorWalk(self, module, {}, "cpu")
            for name, bindings in module.bindings.items():
                if len(bindings) != 1 or name in rebound:
                    continue
                binding = bindings[0]
                if binding.how != ASSIGN or binding.path or type(binding.value) is not cst.Call:
                    continue
                found = alone.device_of(binding.value)
                if isinstance(found, OnCPU):
                    self._constants[name] = found
        return {name: found for name, found in self._constants.items()
                if scope.resolve(name) is module}

    def call_on_cpu(self, call: cst.Call, scope: Scope, trace: OrderedWalk):
        func = call.func
        if returns_torch_tensors(call):
            # ``tokenizer(text, return_tensors="pt")``: tensors made on the CPU (issue 28:
            # the inputs of a model moved to the GPU, not moved, then ``model.generate(**inputs)``)
            return None if self.on_default_device(call) else OnCPU(call)
        qualified = self.kinds.qualname(func, scope)
        if qualified is None and isinstance(func, cst.Attribute):  # a method, not torch.zeros
            method = func.attr.value
            if method == "cpu" and not call.args:
                return OnCPU(call)
            if method == "type" and self.device_of_move(call, scope)[0]:
                return None
            if method == "to":
                moved, _ = self.device_of_move(call, scope)
                if moved:
                    return None
                argument = move_device_argument(call)
                if argument is not None and self.devices.is_cpu_device(argument, scope):
                    return OnCPU(call)
                if argument is not None and self.devices.is_dtype(argument, scope):
                    return trace.device_of(func.value)
                return None
            if method in api.NON_TENSOR_TENSOR_METHODS or method == "cuda" or (
                    method in api.HOST_COPY_METHODS and method != "cpu"):  # (``.cpu()``: above)
                return None
            if method in api.OTHER_TENSORS_DEVICE_METHODS:  # ``torch.eye(n).type_as(x)``
                return trace.device_of(call.args[0].value) if call.args else None
            if method in api.TENSOR_METHODS or method in api.SPLITTING_METHODS or \
                    method in api.NAMED_TUPLE_METHODS:  # (``vals, idx = x.topk(k)``: both there)
                return trace.device_of(func.value)
            return None
        if qualified in api.DEVICE_KEEPING_FUNCTIONS:
            return trace.device_of(call.args[0].value) if call.args else None
        helper = self.helper_called(call, scope)
        if helper is not None:
            # (under ``with torch.device(X):`` the helper's factories create on X too)
            if self.returned_on_cpu(helper) is not None:
                return None if self.on_default_device(call) else OnCPU(call)
            returned = self.returned_argument(call, scope)  # ``x = normalize(x)``
            return trace.device_of(returned) if returned is not None else None
        torch_call = _torch_function(call, qualified)
        if torch_call is None:
            return None
        tail, device = torch_call
        if tail in api.FACTORIES or tail.endswith("_like"):
            if device is not None:
                return OnCPU(call) if self.devices.is_cpu_device(device, scope) else None
            if tail.endswith("_like"):
                return trace.device_of(call.args[0].value) if call.args else None
            return None if self.on_default_device(call) else OnCPU(call)
        tensors = [e.value for arg in call.args if arg.keyword is None
                   for e in (arg.value.elements if isinstance(arg.value, (cst.List, cst.Tuple))
                             else [arg])]
        if not tensors:
            return None
        if tail in api.JOINING_FUNCTIONS and isinstance(tensors[0], cst.Name):
            # ``feats = torch.cat(feats)`` of a list the function filled with ``.append(x.cpu())``
            # (BLIP's retrieval keeps its image features on the host so): each piece there
            joined = self._joined_on_cpu(call, tensors[0], scope)
            if joined is not None:
                return joined
        found = [trace.device_of(value) for value in tensors]
        # all on the CPU (numbers among them: ``torch.where(m, x, 0.0)``), at least one known
        if any(found) and all(f or is_number(v) for f, v in zip(found, tensors)):
            return next(f for f in found if f)
        return None

    def _joined_on_cpu(self, call: cst.Call, listed: cst.Name, scope: Scope) -> Optional[OnCPU]:
        """The evidence that every piece a list the function built holds, as it reaches the
        join ``call``, is on the CPU (the first append's), else None."""
        site = self.collected.site_of(call)
        sites = None if site is None else self.appended_to(listed.value, scope, site.order)
        if not sites:
            return None
        found = [self.on_cpu(s.call.args[0].value, s.ctx.scope) for s in sites]
        return found[0] if all(found) else None

    def on_default_device(self, call: cst.Call) -> bool:
        """Whether a factory ``call`` without ``device=`` may create on a device other than
        the CPU: the file calls ``torch.set_default_device(X)`` (anywhere: the default is
        global, and set once by a program) or ``call`` is in the body of ``with
        torch.device(X):``, X not the CPU."""
        if self._default_device is None:
            anywhere = any(
                self.kinds.qualname(site.call.func, site.ctx.scope) == "torch.set_default_device"
                and site.call.args
                and not self.devices.is_cpu_device(site.call.args[0].value, site.ctx.scope)
                for site in self.collected.calls_by_name.get("set_default_device", ()))
            inside = set()
            for device_call, ctx, body in self.collected.devices.default_device_blocks:
                if self.kinds.qualname(device_call.func, ctx.scope) == "torch.device" and \
                        not self.devices.is_cpu_device(device_call.args[0].value, ctx.scope):
                    inside.update(id(n) for n in walk_code(body) if isinstance(n, cst.Call))
            self._default_device = (anywhere, inside)
        anywhere, inside = self._default_device
        return anywhere or id(call) in inside

    def accelerator_origin(self, call: cst.Call, scope: Scope) -> bool:
        """Whether ``call`` may be where a value on an accelerator comes from in its function:
        evidence ``call_on_accelerator`` gives of its own (a move, a factory given a device, a
        moved model's call) when asked with no value's device known, so that nothing it
        would take from another value (``device=x.device``, a tensor method) counts. A walk
        places names by the function's own assignments only, so a function without such a
        call has no accelerator evidence at all."""
        # The model called is asked first, whatever its name: a module call with CPU
        # arguments is checked on it, where ``call_on_accelerator`` takes the names of tensor
        # methods for tensor methods.
        return self.moved_model(call.func, scope) is not None or \
            self.call_on_accelerator(call, scope, _KNOWS_NO_VALUE) is not None

    def call_on_accelerator(self, call: cst.Call, scope: Scope, trace: OrderedWalk):
        func = call.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in api.ACCELERATOR_MOVE_METHODS or method == "type":
                moved, device = self.device_of_move(call, scope)
                if method == "type" and not moved:
                    if call.args and (self.kinds.qualname(call.args[0].value, scope) or "") \
                            .rpartition(".")[2] in api.LEGACY_TENSOR_TYPES and \
                            not self.kinds.is_cuda_tensor_type(call.args[0].value, scope):
                        return None  # ``.type(torch.FloatTensor)``: a CPU type, on the host
                    return trace.device_of(func.value)  # ``.type(torch.float16)`` stays put
                if moved:
                    if self.follows_a_value(device, scope, proof=True):
                        return trace.device_of(device.value)  # follows another value
                    return OnAccelerator(call, device)
                argument = move_device_argument(call) if method == "to" else None
                if argument is not None and self.devices.is_dtype(argument, scope) and \
                        keyword_value(call, "device") is None:
                    return trace.device_of(func.value)  # ``.to(torch.float16)`` stays put
                return None
            if method in api.OFF_ACCELERATOR_METHODS:
                return None
            if method in api.OTHER_TENSORS_DEVICE_METHODS and self.kinds.qualname(func, scope) is None:
                return trace.device_of(call.args[0].value) if call.args else None
            if (method in api.TENSOR_METHODS or method in api.SPLITTING_METHODS
                    or method in api.NAMED_TUPLE_METHODS) and \
                    self.kinds.qualname(func, scope) is None:  # (not ``torch.mm(a, b)``)
                if self.kinds.kind_of(func.value, scope) in (K.MODULE,):
                    return None
                return trace.device_of(func.value)
        # (moved before this call, in the order the code runs, where the call's order is
        # known: a notebook that looks at its model's output, then moves it for training)
        site = self.collected.site_of(call)
        before = None if site is None else site.order
        model = self.moved_model(func, scope, before=before)
        if model is None and isinstance(func, cst.Attribute) \
                and func.attr.value not in api.MODULE_BOOKKEEPING_METHODS:
            own = self.method_called(call, scope)  # (``model.init_hidden(n)`` makes on the CPU)
            if own is not None and self.gives_host_values(own):
                return None  # ``self._text_length(text)``: a method that returns Python numbers
            if own is None and self.project_numbers(func.value, func.attr.value, scope):
                return None  # ``model.compute_loss(...)`` of a class of another file, likewise
            if own is None or self.returned(own, "cpu") is None:
                # ``model.encode(x)``, ``model.sample(n)``
                model = self.moved_model(func.value, scope, before=before)
        if model is not None and self.asks_host_output(call, scope):
            return None  # ``pipe(prompt, output_type="np")``: NumPy arrays
        if model is not None and isinstance(func, (cst.Name, cst.Attribute)) and \
                self.project_numbers(func, "forward", scope):
            return None  # a model of another file whose ``forward`` returns ``loss.item()``s
        if model is not None:
            return OnAccelerator(call, model[1])
        found = self._module_given_device_input(call, scope, trace)
        if found is not None:
            return found
        if self._is_loss(func, scope) and not isinstance(
                self.kinds.kind_of(func, scope), K.FuncRef) and \
                self.method_called(call, scope) is None:
            # ``criterion(out, y)`` of ``out`` on the device (not a function or method of the
            # file named like one, ``def loss_fn(out, y): return F.mse_loss(out, y).item()``:
            # its body decides)
            found = trace.first_device([a.value for a in call.args if a.keyword is None])
            if found:
                return found
        qualified = self.kinds.qualname(func, scope)
        if qualified in api.DEVICE_KEEPING_FUNCTIONS:
            return trace.device_of(call.args[0].value) if call.args else None
        if qualified in api.PARAMETER_REDUCTIONS:
            # ``clip_grad_norm_(model.parameters(), 1.0)`` of a moved model: on its device
            given = call.args[0].value if call.args and call.args[0].keyword is None else None
            if isinstance(given, cst.Call) and isinstance(given.func, cst.Attribute) and \
                    given.func.attr.value == "parameters" and not given.args:
                model = self.moved_model(given.func.value, scope, before=before)
                return OfMovedParameters(call, given.func.value, model[1]) \
                    if model is not None else None
            return None
        if qualified is None:
            found = self._method_of_device_object(call, scope)
            if found is not None:
                return found
        if qualified is None or not qualified.startswith(_LIBRARIES_OF_KNOWN_RESULTS):
            helper = self.helper_called(call, scope)
            if helper is not None:
                # what its every ``return`` gives, read in its body, before what it may give
                # as a helper given a moved model (``acc = test(model, loader)`` of a
                # ``correct += pred.eq(y).sum()`` it returns: a tensor, which NumPy's readers
                # then fail on, not the float a helper given a model may give back)
                found = self.returned_on_accelerator(helper)
                if found is not None:
                    return found
                if helper.returns and all(value is not None and _host_copy(value)
                                          for value, _ in helper.returns):
                    # ``seg = run_model(img, model)`` of ``return seg.detach().cpu()``: given a
                    # moved model, it still hands back a host copy (taming-transformers). (Read
                    # from the text: asking the placement of its returns here, in the middle of
                    # the caller's walk, would settle its parameters from half a walk.)
                    return None
            if helper is not None and self.gives_host_values(helper):
                return None  # numbers (``.item()``s), or lists of them: no tensor at all
            found = self._helper_given_moved_model(call, scope, before)
            if found is not None:
                return found
            returned = self.returned_argument(call, scope)  # ``y = normalize(x)``
            if returned is not None:
                return trace.device_of(returned)
            if helper is None:
                # ``out = self._forward(x)`` of ``return self.model(x)``, a method of an object
                # that is no ``nn.Module`` (a module's methods are judged on its device by
                # ``modules``: their walk does not know the module was moved)
                helper = self.method_called(call, scope)
                if helper is not None and self.kinds.class_is_module(helper.cls) is not False:
                    helper = None
            if helper is not None:  # ``out = predict(x)`` of ``return model(x.to(device))``
                found = self.returned_on_accelerator(helper)
                if found is not None:
                    return found
        torch_call = _torch_function(call, qualified)
        if torch_call is None:
            return None
        tail, device = torch_call
        if tail in api.FACTORIES or tail.endswith("_like"):
            if device is not None:
                if self.devices.is_cpu_device(device, scope):
                    return None
                if self.follows_a_value(device, scope, proof=True):
                    return trace.device_of(device.value)
                return OnAccelerator(call, device)
            if tail.endswith("_like") and call.args:
                return trace.device_of(call.args[0].value)
            return None  # created on the CPU
        for arg in call.args:
            if arg.keyword is not None:
                continue
            values = [e.value for e in arg.value.elements] \
                if isinstance(arg.value, (cst.List, cst.Tuple)) else [arg.value]
            found = trace.first_device(values)
            if found:
                return _held(found)  # (``torch.cat(preds)`` of a list: a tensor)
        return None

    def _module_given_device_input(self, call: cst.Call, scope: Scope, trace: OrderedWalk):
        """``generator(x)`` of a module (not a loss: ``_is_loss`` answers for those) whose
        first input is on a device: its output is there too, or the call fails there. Not
        for a module class of this file whose ``forward`` may return a value on the CPU."""
        if not call.args or call.args[0].keyword is not None or call.args[0].star:
            return None
        if not self._a_module(call.func, scope) or self._is_loss(call.func, scope):
            return None
        own = self.method_called(call, scope)
        if own is not None and self.returned(own, "cpu") is not None:
            return None
        given = call.args[0].value
        found = trace.device_of(given)
        if not found:
            return None
        return OutputOfModuleGivenDeviceInput(call, given, _held(found))

    def _held_device(self, device: cst.BaseExpression, scope: Scope) -> bool:
        """``self.device`` in a method of a class of the file that is no ``nn.Module`` (a
        trainer, an evaluator, a GAN wrapper), which sets it somewhere to something that is
        not the CPU: the device the object was given, not the device of a value it follows
        (``x.device``). ``x.to(self.device)`` and ``torch.zeros(n, device=self.device)`` put
        a tensor there (issue 28: ganomaly's ``test()``, the evaluators of recognition code).
        A module's ``self.device`` follows its parameters: not this. (By the name ``self``,
        as the ast prefilters see it.)"""
        if not (isinstance(device, cst.Attribute) and isinstance(device.value, cst.Name)):
            return False
        func = scope.code_owner().func
        if func is not None and func.cls is not None and device.value.value == "self" and \
                func.self_name == "self":
            info = func.cls
        else:
            # or an instance of such a class, whose class body sets it (``training_config.
            # device`` of ``class TrainingConfig: device = "cuda"``, a DDPM tutorial's
            # settings object, issue 28)
            kind = self.kinds.kind_of(device.value, scope)
            if not isinstance(kind, K.Instance):
                return False
            info = kind.info
        if self.kinds.class_is_module(info) is not False:
            return False
        name = device.attr.value
        assigned = [(b.value, b.ctx.scope) for cls in self.kinds.class_chain(info)
                    for b in cls.attributes.get(name, ())]
        assigned += [(value, cls.ctx.scope) for cls in self.kinds.class_chain(info)
                     for value in _class_level_values(cls, name)]
        return bool(assigned) and all(value is not None for value, _ in assigned) and not all(
            self.devices.is_cpu_device(value, where) for value, where in assigned)

    def _method_of_device_object(self, call: cst.Call, scope: Scope) -> Optional[OnAccelerator]:
        """``psnr.compute()`` where ``psnr = PSNR(..., device=device)``: an object built with a
        device (a metric, an environment, a module built in place) keeps its state there, and
        a method given nothing gives that state. A method given arguments may compute from
        them alone (ignite's ``m.box_iou(pred, target)`` follows its inputs). Not a tensor's
        methods (a tensor created with ``device=`` is followed as a tensor), nor a module's
        bookkeeping (``.eval()``, ``.state_dict()``)."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value in api.MODULE_BOOKKEEPING_METHODS \
                or not isinstance(func.value, (cst.Name, cst.Attribute)) or call.args:
            return None
        if self.kinds.kind_of(func.value, scope) in (K.TENSOR, K.OTHER, K.DEVICE):
            return None
        for value, value_scope, path, _ in self.bindings_of(func.value, scope):
            if path or not isinstance(value, cst.Call) or \
                    self.kinds.kind_of(value, value_scope) in (K.TENSOR, K.OTHER, K.DEVICE):
                continue
            device = keyword_value(value, "device")
            if device is None or (isinstance(device, cst.Name) and device.value == "None") or \
                    self.devices.is_cpu_device(device, value_scope) or \
                    _torch_function(value, self.kinds.qualname(value.func, value_scope)):
                continue
            return OnAccelerator(call, device, built=value)
        return None

    def asks_host_output(self, call: cst.Call, scope: Scope) -> bool:
        """The call asks the model for host data (``api.HOST_OUTPUT_KEYWORDS``: diffusers'
        ``output_type="np"``), as a keyword or in a dict it spreads (``pipe(**inputs)`` of
        ``inputs = self.get_dummy_inputs()``, whose ``return`` is a dict display that says
        so: peft's GPU tests)."""
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in api.HOST_OUTPUT_KEYWORDS:
                return string_value(arg.value) in api.HOST_OUTPUT_KEYWORDS[arg.keyword.value]
        return any(arg.star == "**" and self._dict_asks_host_output(arg.value, scope, 0)
                   for arg in call.args)

    def _dict_asks_host_output(self, expr, scope: Scope, depth: int) -> bool:
        """A dict display with a host-output key (``asks_host_output``), or a name every
        binding of which is one, or a call of a function or method of this file whose every
        ``return`` gives one."""
        if depth > 3:
            return False
        if isinstance(expr, cst.Dict):
            return any(isinstance(e, cst.DictElement) and string_value(e.key) in
                       api.HOST_OUTPUT_KEYWORDS and string_value(e.value) in
                       api.HOST_OUTPUT_KEYWORDS[string_value(e.key)] for e in expr.elements)
        if isinstance(expr, cst.Name):
            bindings = self.bindings_of(expr, scope)
            return bool(bindings) and all(
                not path and self._dict_asks_host_output(value, value_scope, depth + 1)
                for value, value_scope, path, _ in bindings)
        if isinstance(expr, cst.Call):
            info = self.helper_called(expr, scope) or self.method_called(expr, scope)
            return info is not None and bool(info.returns) and all(
                value is not None and self._dict_asks_host_output(value, ctx.scope, depth + 1)
                for value, ctx in info.returns)
        return False

    def project_numbers_at(self, call, scope: Scope, position: int) -> Optional[str]:
        """``project_numbers`` of what ``call`` (``model(x)``, ``model.compute_loss(g)``)
        gives at tuple ``position``."""
        if not isinstance(call, cst.Call):
            return None
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value not in ("forward",):
            found = self.project_numbers(func.value, func.attr.value, scope, position=position)
            if found is not None:
                return found
        receiver = func.value if isinstance(func, cst.Attribute) else func
        return self.project_numbers(receiver, "forward", scope, position=position)

    def project_numbers(self, receiver, method: str, scope: Scope, depth: int = 0,
                        position: Optional[int] = None) -> Optional[str]:
        """``file:line`` of ``method`` of the project class (of another file) that ``receiver``
        is built from, when every ``return`` of it gives Python numbers (the project index's
        ``host_returns``): ``model = LANDER(...).to(device)``, then ``model.compute_loss(g)``
        returns ``loss.item()``s, on no device. None when the class is unknown or no such."""
        project = self._project()
        if project is None or depth > 2 or not isinstance(receiver, (cst.Name, cst.Attribute)):
            return None
        for value, value_scope, path, _ in self.bindings_of(receiver, scope):
            while not path and isinstance(value, cst.Call) and \
                    isinstance(value.func, cst.Attribute) and \
                    value.func.attr.value in api.MODULE_SELF_METHODS:
                value = value.func.value  # ``LANDER(...).to(device)``, ``.cuda()``, ``.eval()``
            if path:
                continue
            if isinstance(value, (cst.Name, cst.Attribute)) and not value.deep_equals(receiver):
                found = self.project_numbers(value, method, value_scope, depth + 1, position)
            elif isinstance(value, cst.Call):
                qualified = self.kinds.qualname(value.func, value_scope)
                found = project.returns_numbers(qualified, method, position) \
                    if qualified else None
            else:
                found = None
            if found is not None:
                return found
        return None

    def gives_host_values(self, info: FunctionInfo) -> bool:
        """Every ``return`` of the function ``info`` of this file gives Python values made in
        its body: numbers (a literal, ``loss.item()``, ``len(x)``, arithmetic of those), a
        tuple of them, or a list or dict the body fills with nothing else (``results["loss"]
        .append(loss.item())``). Given a moved model, such a function still hands back no
        tensor (issue 28: the ``train_step``/``train`` pair of course notebooks, whose
        ``results`` lists of floats are then plotted)."""
        key = id(info.node)
        if key not in self._host_values:
            self._host_values[key] = False
            self._host_values[key] = bool(info.returns) and info.scope is not None and \
                not info.opaque_return and all(
                    value is not None and self._host_value(value, ctx.scope, 0, set())
                    for value, ctx in info.returns)
        return self._host_values[key]

    def _host_value(self, expr, scope: Scope, depth: int, pending: set) -> bool:
        """``expr`` is a Python value made on the host: see ``gives_host_values``."""
        if depth > 8:
            return False
        if is_number(expr):
            return True
        if isinstance(expr, cst.BinaryOperation):
            return self._host_value(expr.left, scope, depth + 1, pending) and \
                self._host_value(expr.right, scope, depth + 1, pending)
        if isinstance(expr, cst.UnaryOperation):
            return self._host_value(expr.expression, scope, depth + 1, pending)
        if isinstance(expr, cst.Tuple):
            return all(not isinstance(e, cst.StarredElement) and
                       self._host_value(e.value, scope, depth + 1, pending)
                       for e in expr.elements)
        if isinstance(expr, cst.IfExp):
            # ``x.item() if isinstance(x, torch.Tensor) else x``: a tensor never reaches the
            # ``else``
            guarded = _tensor_test_of(expr.test, self.kinds, scope)
            return self._host_value(expr.body, scope, depth + 1, pending) and (
                (guarded is not None and isinstance(expr.orelse, cst.Name)
                 and expr.orelse.value == guarded)
                or self._host_value(expr.orelse, scope, depth + 1, pending))
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in api.PYTHON_VALUE_METHODS \
                    and self.kinds.qualname(func, scope) is None:
                return True
            if _builtin_number(expr, scope):
                return True
            if isinstance(func, cst.Name) and func.value in api.REDUCING_BUILTINS and \
                    scope.resolve(func.value) is None and expr.args and all(
                        not arg.star and arg.keyword is None and self._host_items(
                            arg.value, scope, depth + 1, pending) for arg in expr.args):
                return True  # ``sum([len(t) for t in text])``
            helper = self.helper_called(expr, scope)
            return helper is not None and self.gives_host_values(helper)
        if isinstance(expr, cst.Name):
            return self._host_name(expr.value, scope, depth, pending)
        return False

    def _host_name(self, name: str, scope: Scope, depth: int, pending: set) -> bool:
        """Every binding of the local ``name`` gives a host value, and a list or dict it is
        bound to is filled with host values only."""
        if scope.resolve(name) is not scope or scope.kind != "function":
            return False
        key = (id(scope), name)
        if key in pending:
            return True  # (``loss = loss / n`` reads its other bindings, judged on their own)
        bindings = scope.bindings.get(name, ())
        if not bindings:
            return False
        pending.add(key)
        try:
            containers = False
            for binding in bindings:
                value = binding.value
                if binding.how == AUGMENT:
                    if not self._host_value(value, scope, depth + 1, pending):
                        return False
                    continue
                if binding.how != ASSIGN or value is None:
                    return False
                if binding.path:
                    if isinstance(value, cst.Call):
                        # ``loss, acc = train_step(...)`` of a function of host values
                        helper = self.helper_called(value, scope)
                        if helper is None or not self.gives_host_values(helper):
                            return False
                        continue
                    if len(binding.path) != 1 or not isinstance(value, (cst.Tuple, cst.List)) \
                            or binding.path[0] >= len(value.elements):
                        return False
                    element = value.elements[binding.path[0]]
                    if isinstance(element, cst.StarredElement) or \
                            not self._host_value(element.value, scope, depth + 1, pending):
                        return False
                    continue
                if isinstance(value, (cst.List, cst.Dict)):
                    containers = True
                    items = [e.value for e in value.elements
                             if not isinstance(e, (cst.StarredElement, cst.StarredDictElement))]
                    if len(items) != len(value.elements) or not all(
                            (isinstance(item, (cst.List, cst.Dict)) and not item.elements)
                            or self._host_value(item, scope, depth + 1, pending) for item in items):
                        return False
                    continue
                if self._empty_container(value, scope):
                    containers = True  # ``log = defaultdict(list)``, ``results = dict()``
                    continue
                if not self._host_value(value, scope, depth + 1, pending):
                    return False
            return not containers or self._filled_with_host_values(name, scope, depth, pending)
        finally:
            pending.discard(key)

    def _host_items(self, expr, scope: Scope, depth: int, pending: set) -> bool:
        """``expr`` is a host value, or a list, tuple or comprehension of them."""
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return self._host_value(expr.elt, scope, depth, pending)
        if isinstance(expr, (cst.List, cst.Tuple)):
            return all(not isinstance(e, cst.StarredElement)
                       and self._host_value(e.value, scope, depth, pending) for e in expr.elements)
        return self._host_value(expr, scope, depth, pending)

    def _empty_container(self, value, scope: Scope) -> bool:
        """``defaultdict(list)``, ``OrderedDict()``, ``dict()``, ``list()``: an empty container
        (``api.EMPTY_CONTAINER_FACTORIES``, Python's builtins)."""
        if not isinstance(value, cst.Call):
            return False
        if isinstance(value.func, cst.Name) and value.func.value in ("list", "dict") and \
                scope.resolve(value.func.value) is None:
            return not value.args
        return self.kinds.qualname(value.func, scope) in api.EMPTY_CONTAINER_FACTORIES and \
            all(isinstance(arg.value, cst.Name) and arg.value.value in ("list", "dict")
                for arg in value.args) and len(value.args) <= 1

    def _filled_with_host_values(self, name: str, scope: Scope, depth: int, pending: set) -> bool:
        """What the function of ``scope`` puts into its list or dict ``name`` (``name.append(v)``,
        ``name[k].append(v)``, ``name[k] = v``) are host values, and nothing else reads it
        but to index it, iterate it or hand it on."""
        body = getattr(scope.node, "body", None)
        if body is None:
            return False
        for node in walk_code(body):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                    _container_root(node.func.value) == name:
                if node.func.attr.value in _LIST_FILLING:
                    value = node.args[-1].value if node.args else None
                    if value is None or not self._host_value(value, scope, depth + 1, pending):
                        return False
                elif node.func.attr.value not in _CONTAINER_READING:
                    return False  # (``extend``, ``update``, ``setdefault``: not followed)
            elif isinstance(node, (cst.Assign, cst.AugAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) \
                    else [node.target]
                for target in targets:
                    if isinstance(target, cst.Subscript) and _container_root(target) == name \
                            and not self._host_value(node.value, scope, depth + 1, pending):
                        return False
        return True

    def _helper_given_moved_model(self, call: cst.Call, scope: Scope,
                                  before: Optional[int] = None) -> Optional[OnAccelerator]:
        """``outputs = synthesis(model, text, ...)`` where ``model`` was moved to a device: a
        helper that runs a moved model gives what the model gave, on its device. Not a builtin
        (``print(model)``, ``len(model)``), not a method of the model itself (asked before).
        Moved before the call (``before``, its source order, where known): DIG's ``adj`` made
        a SciPy matrix, handed to ``sp.coo_matrix`` and only lines later ``adj =
        adj_norm.cuda()``, was no moved model there."""
        func = call.func
        if isinstance(func, cst.Name) and scope.resolve(func.value) is None:
            return None  # a builtin
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return None
        if isinstance(func, cst.Name) and any(b.how not in (DEF, IMPORT)
                                              for b in scope.lookup(func.value)):
            # a function chosen while the program runs (``metric = name2metric[name]``, a
            # parameter): which one, and what it gives back, is unknown
            return None
        for arg in call.args:
            value = arg.value
            if arg.star or not isinstance(value, (cst.Name, cst.Attribute)) or \
                    self.kinds.kind_of(value, scope) is K.TENSOR:
                continue
            model = self.moved_model(value, scope, before=before)
            if model is not None:
                return OnAccelerator(call, model[1], given=value)
        return None

    # -- plain functions of this file: what they return, what they feed a model ----------

    def helper_called(self, call: cst.Call, scope: Scope):
        """The ``FunctionInfo`` of the plain top-level function of this file that ``call``
        calls by its name (not a method, a nested function, a generator, a coroutine or a
        decorated function, whose call does not give what the body returns), else None."""
        return plain_function_named(self.kinds, call.func, scope)

    def object_method_called(self, call: cst.Call, scope: Scope) -> Optional[FunctionInfo]:
        """The method of a class of this file that is no ``nn.Module`` which ``call`` runs on
        an object (``self.step(batch)`` in a trainer's ``fit``, ``trainer.step(batch)``),
        whose body says what it does with its arguments (``method_called``), else None."""
        if not isinstance(call.func, cst.Attribute):
            return None
        method = self.method_called(call, scope)
        if method is None or method.cls is None or self.kinds.class_is_module(method.cls) \
                is not False:
            return None
        return method

    def argument_for(self, call: cst.Call, function, name: str) -> Optional[cst.BaseExpression]:
        """What ``call`` gives the function or method it calls for ``name`` of its summary
        (``callees``): a parameter's argument, or for an attribute of the object a method runs
        on (".model"), that attribute of the call's receiver (``self.model`` of
        ``self.step(batch)``), an expression made once per call and kept (the kinds cache
        answers by node)."""
        bound = function.cls is not None
        if not name.startswith(SELF_ATTRIBUTE):
            return argument_for_parameter(call, function, name, bound=bound)
        if not bound or not isinstance(call.func, cst.Attribute) or \
                not isinstance(call.func.value, cst.Name):
            return None
        key = (id(call), name)
        made = self._receiver_attributes.get(key)
        if made is None:
            made = self._receiver_attributes[key] = cst.Attribute(
                value=call.func.value, attr=cst.Name(name[len(SELF_ATTRIBUTE):]))
        return made

    def returned_argument(self, call: cst.Call, scope: Scope,
                          path: tuple = ()) -> Optional[cst.BaseExpression]:
        """The argument of ``call`` whose value, unmoved, the plain function of this file that
        it calls returns from every ``return``: ``normalize(images)`` of ``def normalize(x):
        return (x - x.mean()) / x.std()``, ``preprocess(batch)`` of one that unpacks ``batch``
        and returns its parts cast (``return images.float() / 255, labels``). The value keeps
        its argument's device (a helper that rebinds a batch, issue 28's ``x =
        utils.normalize(x)``). With ``path`` (an unpacking: ``model, history = fit(model,
        ...)``), the element at that position of the tuple every ``return`` gives. None when
        a return moves it, gives a value of another parameter, of none, or nothing."""
        helper = self.helper_called(call, scope)
        if helper is None or not helper.returns or len(path) > 1:
            return None
        found: Optional[str] = None
        for value, _ in helper.returns:
            if path:
                if not isinstance(value, (cst.Tuple, cst.List)) or path[0] >= len(value.elements) \
                        or any(isinstance(e, cst.StarredElement) for e in value.elements):
                    return None
                value = value.elements[path[0]].value
            parameter = None if value is None else self._derived_parameter(value, helper, 0)
            if parameter is None or (found is not None and parameter != found):
                return None
            found = parameter
        return argument_for_parameter(call, helper, found)

    def _derived_parameter(self, expr, helper, depth: int,
                           known: Optional[Dict[str, str]] = None) -> Optional[str]:
        """The parameter of ``helper`` that ``expr`` (in its body) is computed from without a
        move: the parameter itself (never reassigned), a local bound once to such a value
        (also by unpacking it), tensor methods that keep the device, arithmetic with
        numbers or with values of the same parameter, slices, a tuple of such values."""
        if depth > 6 or helper.scope is None:
            return None
        if isinstance(expr, cst.Name):
            if known is not None and expr.value in known:
                return known[expr.value]
            bindings = helper.scope.bindings.get(expr.value, ())
            if len(bindings) != 1:
                # ``correct = pred.eq(y).double()``, then ``correct = correct.sum()``: a name
                # rebound from itself keeps what its first assignment derives from
                if not bindings or any(b.how != ASSIGN or b.path or b.value is None
                                       for b in bindings):
                    return None
                ordered = sorted(bindings, key=lambda b: b.order)
                found = self._derived_parameter(ordered[0].value, helper, depth + 1, known)
                if found is None:
                    return None
                inner = {**(known or {}), expr.value: found}
                if any(not reads_name(b.value, expr.value) or
                       self._derived_parameter(b.value, helper, depth + 1, inner) != found
                       for b in ordered[1:]):
                    return None
                return found
            binding = bindings[0]
            if binding.how == PARAM:
                return expr.value if expr.value != helper.self_name else None
            if binding.how != ASSIGN or binding.value is None:
                return None
            return self._derived_parameter(binding.value, helper, depth + 1, known)
        if isinstance(expr, (cst.Tuple, cst.List)):
            found = {self._derived_parameter(e.value, helper, depth + 1, known)
                     for e in expr.elements if not isinstance(e, cst.StarredElement)}
            return found.pop() if len(found) == 1 and None not in found else None
        if isinstance(expr, cst.Subscript):
            return self._derived_parameter(expr.value, helper, depth + 1, known)
        if isinstance(expr, cst.UnaryOperation):
            return self._derived_parameter(expr.expression, helper, depth + 1, known)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, ARITHMETIC_OPERATORS):
            # (a number, or what a builtin counts: ``correct / len(labels)``)
            found = {self._derived_parameter(side, helper, depth + 1, known)
                     for side in (expr.left, expr.right)
                     if not is_number(side) and not _builtin_number(side, helper.scope)}
            return found.pop() if len(found) == 1 and None not in found else None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
                self.kinds.qualname(expr.func, helper.scope) is None:
            method = expr.func.attr.value
            if method in api.OTHER_TENSORS_DEVICE_METHODS and len(expr.args) == 1:
                # ``output.max(1)[1].type_as(labels)``: where its argument is
                return self._derived_parameter(expr.args[0].value, helper, depth + 1, known)
            if method in api.ACCELERATOR_MOVE_METHODS or method in api.RETYPING_METHODS or \
                    method in api.HOST_COPY_METHODS or method not in api.TENSOR_METHODS:
                return None
            return self._derived_parameter(expr.func.value, helper, depth + 1, known)
        return None

    def returned_on_cpu(self, info) -> Optional[OnCPU]:
        """Evidence that every ``return`` of the plain function ``info`` gives a tensor on the
        CPU (``def text_to_token_ids(...): return torch.tensor(ids).unsqueeze(0)``), judged
        in its body as ``on_cpu`` judges; None when a return gives anything else or nothing
        (a parameter, whose placement is its caller's: issue 28)."""
        each = self._every_return(info, "cpu")
        return each[0] if each else None

    def returned_on_accelerator(self, info) -> Optional[OnAccelerator]:
        """Evidence that every ``return`` of the plain function ``info`` gives a tensor on an
        accelerator, judged in its body as ``on_accelerator`` judges (``def predict(x): return
        model(x.to(device))`` of a moved ``model``, issue 28); None when a return gives
        anything else or nothing, or its device is a parameter (``_device_given``)."""
        each = self._every_return(info, "accelerator")
        if not each or any(self._device_given(evidence, info) for evidence in each):
            return None
        return ReturnedOnAccelerator(info.name, each[0])

    def _every_return(self, info, side: str) -> Optional[list]:
        """The evidence, one per ``return`` of ``info``, that each gives a tensor on ``side``
        ("cpu" or "accelerator"), where every one does and none is on the other side too (``X
        + torch.rand(n)`` of a moved ``X`` fails in there, and would give a tensor on the
        device); else None. Once per function and side."""
        key = (side, id(info.node))
        if key in self._returns:
            return self._returns[key]
        self._returns[key] = None  # (a recursive function: no evidence from itself)
        found = None
        if info.returns and all(value is not None for value, _ in info.returns):
            # (on the CPU side a tuple display too, ``return h0, c0``: an LSTM's initial state
            # made in a plain function, handed on whole, as ``returned`` reads a method's; the
            # rules that fix such a value ask ``gives_a_tuple`` first, as no ``.to()`` applies)
            there = self.on_accelerator if side == "cpu" else self.on_cpu
            each = [self._placed_or_all(value, ctx.scope, side) if side == "cpu"
                    else self.on_accelerator(value, ctx.scope) for value, ctx in info.returns]
            if all(each) and not any(there(value, ctx.scope) for value, ctx in info.returns):
                found = each
        self._returns[key] = found
        return found

    @staticmethod
    def _device_given(evidence: OnAccelerator, info) -> bool:
        """The device of ``evidence`` is a parameter of ``info`` (``torch.arange(n,
        device=device)``): each call decides it, the CPU too (pytorch_geometric's
        ``sample(population, k, device='cpu')``)."""
        device = evidence.device
        if not isinstance(device, cst.Name) or info.scope is None:
            return False
        return any(binding.how == PARAM for binding in info.scope.bindings.get(device.value, ()))

    def appended_to(self, name: str, scope: Scope, before: int,
                    methods: Tuple[str, ...] = ("append",)) -> Optional[List[CallSite]]:
        """The ``name.append(value)`` calls (or those of the other ``methods``: ``extend``),
        in the order they run, of a list the function
        (or the module's code) of ``scope`` builds itself, as they reach the point ``before``
        (a call's order: the ``torch.cat(name)`` that joins the pieces, issue 28, yolov5's
        ``val.py``): the last binding of ``name`` there before that point is ``[]`` (also as
        one of ``a, b = [], []``), the appends between the two, and nothing is taken out of
        the list (``pop``, ``clear``, ``remove``). None for any other name: what it collects
        is then unknown."""
        scope = scope.code_owner()
        if scope.resolve(name) is not scope:
            return None
        earlier = [b for b in scope.bindings.get(name, ()) if b.order < before]
        if not earlier or earlier[-1].how != ASSIGN:
            return None
        binding = earlier[-1]
        value = unpacked_element(binding.value, binding.path)
        if not isinstance(value, cst.List) or value.elements:
            return None

        def on_the_list(site: CallSite) -> bool:
            func = site.call.func
            return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
                func.value.value == name and site.ctx.scope.code_owner() is scope

        calls = self.collected.calls_by_name
        if any(on_the_list(site) for method in api.LIST_REMOVING_METHODS
               for site in calls.get(method, ())):
            return None
        return sorted((site for method in methods for site in calls.get(method, ())
                       if on_the_list(site) and binding.order < site.order < before
                       and len(site.call.args) == 1 and not site.call.args[0].star
                       and site.call.args[0].keyword is None),
                      key=lambda site: site.order)

    # -- models moved to a device ----------------------------------------------------


    def model_key(self, expr: cst.BaseExpression, scope: Scope):
        if isinstance(expr, cst.Name):
            owner = scope.resolve(expr.value)
            return ("name", id(owner) if owner else None, expr.value)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            owner_kind = self.kinds.kind_of(expr.value, scope)
            if isinstance(owner_kind, K.Instance):
                return ("attr", id(owner_kind.info), expr.attr.value)
            owner = scope.resolve(expr.value.value)
            return ("dotted", id(owner) if owner else None, expr.value.value, expr.attr.value)
        return None

    def follows_a_value(self, device, scope: Scope, proof: bool = False) -> bool:
        """Whether a device expression is ``x.device`` of a value ``x``: it goes wherever
        ``x`` is, so it states no device of the code's own; else it is a device the code
        holds (or no ``.device`` at all). The one answer, in two strengths:

        - for a loop's own moves (TDL004), the device any instance of a class of this file
          holds is the code's own (``self.device``: kindle's ``TorchTrainer`` moves its
          batches with ``.to(self.device)``, chosen as a ``device`` variable is);
        - where a value must be proved on an accelerator (``proof``: ``call_on_accelerator``
          for TDL008/TDL011), only ``self.device`` of a plain class of the file that sets it
          to something other than the CPU (``_held_device``: a trainer or evaluator given the
          device). A module's ``self.device``, or another instance's, follows its parameters:
          that proves no accelerator (a FALSE TDL008 at coqui TTS, had it counted)."""
        if not _reads_a_device(device):
            return False
        if proof:
            return not self._held_device(device, scope)
        return not isinstance(self.kinds.kind_of(device.value, scope), K.Instance)

    def device_of_move(self, call: cst.Call, scope: Scope) -> Tuple[bool, Optional[cst.BaseExpression]]:
        """Whether ``call`` (``X.to(...)``/``X.cuda()``) moves X to an accelerator, and with what."""
        if not isinstance(call.func, cst.Attribute):
            return False, None
        method = call.func.attr.value
        if method == "cuda":
            return True, None
        if method == "type":  # ``x.type(torch.cuda.FloatTensor)``: a copy on the GPU
            return bool(call.args) and self.kinds.is_cuda_tensor_type(call.args[0].value, scope), None
        if method != "to":
            return False, None
        device = move_device_argument(call)
        if device is None or self.devices.is_dtype(device, scope) \
                or self.devices.is_cpu_device(device, scope):
            return False, None
        if self.kinds.kind_of(device, scope) is K.TENSOR:
            return False, None  # .to(other_tensor): follows another tensor, not a device choice
        return True, device

    def _collect_bare_moves(self) -> Dict[tuple, List[tuple]]:
        """model key -> [(order, device expression)] of bare ``model.to(device)`` statements,
        also at the head of a chain whose value is thrown away
        (``model.to(device).reset_parameters()``, PyG's benchmarks): a module moves in place."""
        moves: Dict[tuple, List[tuple]] = {}
        calls = self.collected.calls_by_name
        chained = set()
        for name, sites in calls.items():
            if name in api.ACCELERATOR_MOVE_METHODS:
                continue
            for site in sites:
                if site.statement is None:
                    continue
                inner = site.call.func.value if isinstance(site.call.func, cst.Attribute) else None
                while isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute):
                    chained.add(id(inner))
                    inner = inner.func.value
        for site in calls.get("to", []) + calls.get("cuda", []) + calls.get("type", []):
            if site.statement is None and id(site.call) not in chained:
                continue
            receiver = site.call.func.value
            if self.kinds.kind_of(receiver, site.ctx.scope) in (K.TENSOR, K.BATCH, K.ENCODING):
                continue
            moved, device = self.device_of_move(site.call, site.ctx.scope)
            key = self.model_key(receiver, site.ctx.scope)
            if moved and key is not None:
                moves.setdefault(key, []).append((site.order, device))
            elif key is not None and site.statement is not None and \
                    self._to_the_cpu(site.call, site.ctx.scope):
                self._taken_back.setdefault(key, []).append(site.order)
        for site in calls.get("cpu", []):  # ``model.cpu()`` as a statement
            if site.statement is not None and isinstance(site.call.func, cst.Attribute):
                receiver = site.call.func.value
                key = self.model_key(receiver, site.ctx.scope)
                if key is not None and self.kinds.kind_of(receiver, site.ctx.scope) not in (
                        K.TENSOR, K.BATCH, K.ENCODING):
                    self._taken_back.setdefault(key, []).append(site.order)
        return moves

    def _to_the_cpu(self, call: cst.Call, scope: Scope) -> bool:
        """``model.to("cpu")``, ``model.cpu()``: a module moved back to the host."""
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "cpu":
            return True
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "to"):
            return False
        device = move_device_argument(call)
        return device is not None and self.devices.is_cpu_device(device, scope)

    def _chain_move(self, expr, scope: Scope):
        """``Net().to(device).eval()`` -> (True, device). A choice moved in one branch
        (``Net().cuda() if use_cuda else Net()``) is moved: a device chosen at runtime counts,
        the code is written to run on an accelerator."""
        if isinstance(expr, cst.IfExp):
            for branch in (expr.body, expr.orelse):
                moved, device = self._chain_move(branch, scope)
                if moved:
                    return True, device
            return False, None
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            moved, device = self.device_of_move(expr, scope)
            if moved:
                return True, device
            expr = expr.func.value
        return False, None

    def wraps_or_prepares(self, expr, scope: Scope) -> bool:
        return self._wrapper(expr, scope) is not None

    def _wrapper(self, expr, scope: Scope) -> Optional[tuple]:
        """("prepare", call) when accelerate/Fabric prepares the value (they move batches
        themselves), ("scatter", call) when it is wrapped in DataParallel/DDP or torch's FSDP
        (also imported as ``FSDP``: the name its import gives; they move the *inputs* they
        are given, not what meets their output), else None."""
        stack = [expr]
        scatter = None
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Call):
                name = last_name(node.func) or ""
                if name in _PREPARING_CALLS:
                    return ("prepare", node)
                if scatter is None and (name.endswith(_WRAPPERS_THAT_SCATTER) or (
                        self.kinds.qualname(node.func, scope) or "").rpartition(".")[2]
                        in api.INPUT_MOVING_WRAPPERS):
                    scatter = ("scatter", node)
                stack.append(node.func)
                stack.extend(a.value for a in node.args)
            elif isinstance(node, cst.Attribute):
                stack.append(node.value)
        return scatter

    def _wrapper_of_root(self, value, scope: Scope) -> Optional[tuple]:
        """``_wrapper`` of what the name a chain starts from was bound to: ``wrapped =
        nn.DataParallel(net)`` then ``model = wrapped.to(device)`` (a temporary, issue 28)."""
        root = value
        while isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute):
            root = root.func.value
        if root is value or not isinstance(root, cst.Name):
            return None
        for bound, _, path, _ in self.bindings_of(root, scope):
            found = None if path else self._wrapper(bound, scope)
            if found is not None:
                return found
        return None

    def scatters(self, callee: cst.BaseExpression, scope: Scope) -> bool:
        """The model called is a DataParallel/DDP wrapper: it moves its inputs itself."""
        target = callee.value if isinstance(callee, cst.Attribute) and \
            callee.attr.value in ("forward", "generate") else callee
        return self.model_key(target, scope) in self._scattering

    def state_of_moved_model(self, attribute: cst.Attribute, scope: Scope,
                             before: Optional[int] = None) -> Optional[StateOfMovedModel]:
        """``model.embedding.weight.data.numpy()`` after ``model = Net().to(device)`` (the
        embeddings shown after training on a GPU, issue 28): ``attribute`` (a parameter or
        buffer's name, ``api.MODULE_STATE_ATTRIBUTES``) of a module reached from a moved model
        through attributes and indices (``model[0]``, ``model.layers[2].attn``) is on the
        model's device. Where the module is known to be something else (a tensor, a function),
        nothing."""
        owner = attribute.value
        while isinstance(owner, (cst.Attribute, cst.Subscript)):
            kind = self.kinds.kind_of(owner, scope)
            if kind is K.TENSOR or isinstance(kind, (K.FuncRef, K.ClassRef, K.Qual)):
                return None
            owner = owner.value
        if not isinstance(owner, cst.Name):
            return None
        model = self.moved_model(owner, scope, before=before)  # (moved before it is read)
        return None if model is None else StateOfMovedModel(model[0], model[1])

    def moved_model(self, callee: cst.BaseExpression, scope: Scope, before: Optional[int] = None,
                    depth: int = 0):
        """(model expression, device expression) if ``callee`` is a model moved to a device.

        With ``before`` (the source order of a loop), a model assigned in the loop's own scope
        is judged by its last assignment before the loop and the moves after that assignment:
        ``model.to(d)`` followed by ``model = accelerator.prepare(model)`` is not moved.
        A parameter (``def train(model, loader)``) is a moved model when every call of the
        function in this file passes one.
        """
        target = callee
        if isinstance(callee, cst.Attribute) and callee.attr.value in ("forward", "generate"):
            target = callee.value
        elif isinstance(callee, cst.Attribute) and depth < 3:
            # ``model.embed(tokens)``: a registered submodule with weights of a moved model
            # is on the model's device (issue 28)
            owner = self.kinds.kind_of(callee.value, scope)
            if isinstance(owner, K.Instance) and self._weighted_submodule(owner.info,
                                                                          callee.attr.value):
                found = self.moved_model(callee.value, scope, before, depth + 1)
                return None if found is None else (callee, found[1])
        key = self.model_key(target, scope)
        if key is None:
            return None
        kind = self.kinds.kind_of(target, scope)
        if kind is K.TENSOR or isinstance(kind, (K.FuncRef, K.ClassRef, K.Qual)):
            return None
        bindings = self.bindings_of(target, scope)
        since = -1
        if before is not None and isinstance(target, cst.Name) and scope.resolve(target.value) is scope:
            # (``model, history = fit(model, ...)`` of a helper that returns the model it was
            # given rebinds the name to the same module: its placement goes on)
            earlier = [b for b in bindings if b[3] < before and not self._hands_back(target, b)]
            if earlier:
                bindings = [max(earlier, key=lambda b: b[3])]
                since = bindings[0][3]
            elif not any(b[3] < before for b in bindings):
                bindings = []  # bound only later: here it holds what it entered with (DIG's
                # ``adj`` parameter, a SciPy matrix, before ``adj = adj_norm.cuda()``)
        moved, device = False, None
        moves = self._moves().get(key, ())  # (fills ``_taken_back`` too)
        taken_back = list(self._taken_back.get(key, ()))
        for value, value_scope, path, order in bindings:
            if not path and isinstance(value, cst.Call) and self._to_the_cpu(value, value_scope):
                taken_back.append(order)  # ``model = model.to("cpu")``: back on the host
                continue
            wrapper = self._wrapper(value, value_scope) or \
                self._wrapper_of_root(value, value_scope)
            if wrapper is not None and wrapper[0] == "prepare":
                return None  # accelerate/Fabric move the batches themselves
            if wrapper is not None:
                # DataParallel/DDP move the inputs they are given, but their output is on the
                # device and meets whatever the loop feeds the loss unmoved.
                self._scattering.add(key)
                inner_moved, inner_device = self._wrapped_is_moved(wrapper[1], value_scope, order, depth)
                if inner_moved:
                    moved, device = True, device or inner_device
                continue
            chain_moved, chain_device = self._chain_move(value, value_scope)
            if chain_moved and not path:
                moved, device = True, chain_device
            elif not path and isinstance(value, (cst.Name, cst.Attribute)) and depth < 3 \
                    and self.model_key(value, value_scope) not in (None, key):
                # ``net = model``: the same module under a second name (issue 28)
                found = self.moved_model(value, value_scope, before, depth + 1)
                if found is not None:
                    moved, device = True, device or found[1]
            elif not path and isinstance(value, cst.Call) and depth < 3:
                # ``model = loadmodel(hook)`` of a function of the file that builds a model,
                # moves it and returns it (NetDissect's ``loadmodel``, issue 28)
                found = self._returned_moved_model(value, value_scope, depth)
                if found is not None:
                    moved, device = True, device or found[1]
        for order, move_device in moves:
            if order > since and (before is None or since < 0 or order < before):
                moved, device = True, device or move_device
        if moved and any(order > since and (before is None or order < before)
                         for order in taken_back):
            # moved back to the CPU by a statement too (``model.to("cpu")`` for inference in
            # a notebook's last cell): the evidence points both ways
            return None
        if not moved and isinstance(target, cst.Name) and before is None:
            # ``net = model; net.to(device)`` moves ``model`` too: one module, two names
            owner = scope.resolve(target.value)
            for alias in self._aliases(owner).get(target.value, ()) if owner else ():
                for _, move_device in self._moves().get(("name", id(owner), alias), ()):
                    moved, device = True, device or move_device
        if not moved and not bindings and isinstance(target, cst.Name) and depth < 3:
            moved = self._moved_by_every_caller(target.value, scope, depth)
            if moved and any(before is None or order < before for order in taken_back):
                # a parameter every caller gives moved, which the function moves back to the
                # host first (``model.to("cpu")`` at the top of a plotting helper, issue 28)
                return None
        return (target, device) if moved else None

    def _returned_moved_model(self, call: cst.Call, scope: Scope, depth: int):
        """(model, device) where ``call`` calls a plain function of the file every ``return``
        of which gives a model moved to a device (a name of its own that it moved: not a
        parameter, whose placement is its callers'); else None. The device expression is the
        helper's, which the caller's code cannot name: None."""
        helper = self.helper_called(call, scope)
        if helper is None or not helper.returns:
            return None
        found = None
        for value, ctx in helper.returns:
            if not isinstance(value, cst.Name) or any(
                    b.how == PARAM for b in ctx.scope.bindings.get(value.value, ())):
                return None
            each = self.moved_model(value, ctx.scope, None, depth + 1)
            if each is None:
                return None
            found = found or each
        return None if found is None else (found[0], None)

    def _a_module(self, expr, scope: Scope) -> bool:
        """Whether ``expr`` holds a module: its kind says so, or (a name whose kind is unknown)
        an assignment of it builds one and no other gives a known kind that is not one
        (``gen = Generator().to(d)``, then ``gen, disc = models`` from amp's ``initialize``)."""
        kind = self.kinds.kind_of(expr, scope)
        if self.kinds.is_module(kind):
            return True
        if kind is not K.UNKNOWN or not isinstance(expr, cst.Name):
            return False
        kinds = [self.kinds.kind_of(value, value_scope)
                 for value, value_scope, path, _ in self.bindings_of(expr, scope) if not path]
        return any(self.kinds.is_module(k) for k in kinds) and \
            all(self.kinds.is_module(k) or k is K.UNKNOWN for k in kinds)

    def _hands_back(self, target: cst.Name, binding: tuple) -> bool:
        """Whether ``binding`` rebinds ``target`` to the value a helper of this file was given
        for it and returns unmoved: ``model = tune(model)``, ``model, history = fit(model,
        ...)`` of ``def fit(model, ...): ...; return model, history``."""
        value, value_scope, path, _ = binding
        if not isinstance(value, cst.Call):
            return False
        argument = self.returned_argument(value, value_scope, path)
        return isinstance(argument, cst.Name) and argument.value == target.value

    def _aliases(self, scope: Scope) -> Dict[str, List[str]]:
        """name -> the names of ``scope`` that an assignment binds to it (``net = model``)."""
        table = self._alias_table.get(id(scope))
        if table is None:
            table = self._alias_table[id(scope)] = {}
            for name, bindings in scope.bindings.items():
                for b in bindings:
                    if b.how == ASSIGN and not b.path and isinstance(b.value, cst.Name) \
                            and b.value.value != name:
                        table.setdefault(b.value.value, []).append(name)
        return table

    def tensors_held(self, callee: cst.BaseExpression, scope: Scope, depth: int = 0) -> List[tuple]:
        """[(tensor expression, its scope)] that the loss module ``callee`` holds from its
        construction (``criterion = nn.CrossEntropyLoss(weight=w)``: class weights, a
        ``pos_weight``), when every assignment of it builds a torch.nn loss class (or names
        another such loss module: ``loss_fn = criterion``) and nothing moves it
        (``criterion.to(device)``, ``.cuda()``): calling it meets them (issue 28)."""
        if not isinstance(callee, cst.Name) or self.moved_model(callee, scope) is not None:
            return []
        bindings = self.bindings_of(callee, scope)
        held: List[tuple] = []
        for value, value_scope, path, _ in bindings:
            if not path and isinstance(value, cst.Name) and value.value != callee.value \
                    and depth < 3:
                aliased = self.tensors_held(value, value_scope, depth + 1)
                if not aliased:
                    return []
                held.extend(aliased)
                continue
            if path or not isinstance(value, cst.Call):
                return []
            qualified = self.kinds.qualname(value.func, value_scope) or ""
            if not api.is_loss_class(qualified):
                return []
            for index, arg in enumerate(value.args):
                if arg.star:
                    break
                keyword = arg.keyword.value if arg.keyword is not None else None
                if keyword in api.LOSS_TENSOR_KEYWORDS or (
                        keyword is None and index == 0
                        and qualified.rpartition(".")[2] in api.WEIGHT_FIRST_LOSS_CLASSES):
                    held.append((arg.value, value_scope))
        return held

    def _wrapped_is_moved(self, wrapper: cst.Call, scope: Scope, order: int, depth: int):
        """``DDP(model.to(rank), device_ids=[rank])``, ``DataParallel(net)`` of a moved ``net``."""
        for node in walk_code(wrapper):
            if isinstance(node, cst.Call) and node is not wrapper:
                moved, device = self.device_of_move(node, scope)
                if moved:
                    return True, device
        for arg in wrapper.args:
            if arg.keyword is not None and arg.keyword.value in ("device_ids", "output_device"):
                return True, None
        inner = next((a.value for a in wrapper.args if a.keyword is None and not a.star), None)
        if isinstance(inner, (cst.Name, cst.Attribute)) and depth < 3:
            found = self.moved_model(inner, scope, order, depth + 1)
            if found is not None:
                return True, found[1]
        return False, None

    def _moved_by_every_caller(self, name: str, scope: Scope, depth: int) -> bool:
        def passes_a_moved_model(argument, site: CallSite) -> bool:
            if self.moved_model(argument, site.ctx.scope, site.order, depth + 1) is None:
                return False
            if self.model_key(argument, site.ctx.scope) in self._scattering:
                self._scattering.add(self.model_key(cst.Name(name), scope))
            return True

        found = self.every_caller(name, scope, passes_a_moved_model, ("model", "moved", "wrapped"))
        if found is None:
            return False
        key = self.model_key(cst.Name(name), scope)
        if found[1]:
            self._caller_evidence[key] = found[1]
            if key not in self._scattering and self.every_caller(
                    name, scope, lambda argument, site: self.model_key(
                        argument, site.ctx.scope) in self._scattering, ("wrapped",)):
                # every call, here and in the project's other files, passes the model wrapped
                # in DataParallel/DDP/FSDP: it moves the inputs (LLaMA-Adapter's
                # ``train_one_epoch(model, ...)``, called only with ``model = FSDP(model, ...)``)
                self._scattering.add(key)
        return True

    def moved_by_callers(self, target: cst.BaseExpression, scope: Scope) -> Optional[str]:
        """``file:line`` of a call in another file of the project that passes the moved model
        a parameter is known by (``moved_model`` found it so), else None."""
        return self._caller_evidence.get(self.model_key(target, scope))

    def every_caller(self, name: str, scope: Scope, passes: Callable[[object, CallSite], bool],
                     kinds) -> Optional[Tuple[str, str]]:
        """When the parameter ``name`` (seen from ``scope``) of a plain function (or of a
        class's ``__init__``: its constructions) is given, by every call of the function, a
        value that ``passes`` (a call in this file) or is of one
        of ``kinds`` (a call in another file of the project, as its summary says:
        ``project_index.Summary["calls"]``): (the function's name, ``file:line`` of a call in
        another file, or "" when all calls are in this file). None when a call passes
        anything else, or nothing calls it."""
        owner = scope.resolve(name)
        if owner is None or owner.func is None or owner.kind != "function":
            return None
        bindings = owner.bindings[name]
        if len(bindings) != 1 or bindings[0].how != PARAM:
            return None
        # (methods and *args: call sites are not matched reliably; some callers analysed
        # apart, in a huge literal table: not all seen)
        passed = self.kinds.caller_arguments(bindings[0])
        if passed is None or not all(passes(argument, site) for argument, site in passed):
            return None
        callers = len(passed)
        _, func, index = bindings[0].value
        index = K.positional_index(func, index)
        called = func.name
        defined_in = func.ctx.scope
        if func.cls is not None and func.name == "__init__":  # the constructions of its class
            called, index = func.cls.name, index - 1 if index > 0 else -1
            defined_in = func.cls.ctx.scope
        where = ""
        project = self._project() if defined_in.kind == "module" else None
        if project is not None:
            across = project.passed_by_every_caller(called, name, index, kinds)
            if across is None:
                return None
            callers += across[0]
            where = across[1] or ""
        return (func.name, where) if callers else None

    def parameters_on_accelerator(self, scope: Scope) -> Dict[str, OnAccelerator]:
        """The parameters of the function of ``scope`` that every call passes a value on an
        accelerator (``every_caller``), with that evidence."""
        known = self._parameters.get(id(scope))
        if known is not None:
            return known
        found = self._parameters[id(scope)] = {}
        if scope.kind != "function" or scope.func is None:
            return found
        for name, bindings in scope.bindings.items():
            if not bindings or bindings[0].how != PARAM:
                continue
            calls = self.every_caller(
                name, scope,
                lambda argument, site: self.on_accelerator(argument, site.ctx.scope) is not None,
                ("tensor", "moved"))
            if calls is not None:
                found[name] = PassedOnAccelerator(*calls)
                continue
            twin = self.copied_by_twin(scope.func, name)
            if twin is not None and self._callers_on_cpu(bindings[0]) is None:
                found[name] = twin
        if found:
            # A caller's walk may have asked what the function returns and walked its body
            # before its parameters were known here (issue 28's diffusion ``noise_images(x,
            # t)`` of a ``t`` every call moves): walked again when asked, as on the CPU side.
            self._walked.pop((id(scope.func.node), "accelerator"), None)
        return found

    def parameters_on_cpu(self, scope: Scope) -> Dict[str, OnCPU]:
        """The parameters of the method of ``scope`` (issue 28: qdtrack's ``tracker.match(
        bboxes, labels, ...)`` of labels made on the CPU) that every call of this file passes
        a tensor on the CPU, and no call of another file can reach: a method, matched to its
        calls through instances of its class (``KindInference.caller_arguments``). (A plain
        function's callers in other files are not known by where their tensors are.)"""
        known = self._cpu_parameters.get(id(scope))
        if known is not None:
            return known
        found = self._cpu_parameters[id(scope)] = {}
        func = scope.func
        if scope.kind != "function" or func is None or func.cls is None or \
                func.name == "__init__":
            return found
        for name, bindings in scope.bindings.items():
            # (the value it enters with: the walk follows its rebindings, ``labels =
            # labels[inds]``)
            param = next((b for b in bindings if b.how == PARAM), None)
            if param is None or param.value[2] == 0:
                continue
            evidence = self._callers_on_cpu(param)
            if evidence and all(e.origin is not None for e in evidence):
                found[name] = PassedOnCPU(evidence[0].origin, func.name)
        if found:
            # A caller's walk may have asked what the method returns (``method_called``) and
            # walked its body before its parameters were known here: walked again when asked.
            self._walked.pop((id(func.node), "cpu"), None)
        return found

    def _callers_on_cpu(self, param: Binding) -> Optional[List[OnCPU]]:
        """The evidence that every call of this file passes a tensor on the CPU for the
        parameter ``param``, one per call; None when a call passes anything else, or nothing
        calls it (``parameters_on_cpu``; and what outweighs a twin's habit of copying the
        same parameter to the host, issue 28: dgl's CPU feature-store tests, whose
        ``to_on_disk_numpy(tmp, name, t)`` is called only with ``torch.tensor(...)`` while
        the GPU test file beside them copies its ``t`` with ``.cpu()``)."""
        passed = self.kinds.caller_arguments(param)
        evidence = []
        for argument, site in passed or ():
            found = self.on_cpu(argument, site.ctx.scope)
            if found is None:
                return None
            evidence.append(found)
        return evidence or None

    def copied_by_twin(self, func: FunctionInfo, name: str) -> Optional[CopiedByTwin]:
        """``CopiedByTwin`` evidence for the parameter ``name`` of the top-level function
        ``func``: another top-level function with the same parameters (two or more, in the
        same order) copies its parameter ``name`` to the host before converting it, in this
        file, else in a file of the same folder (``ProjectView.host_copy_twin``)."""
        params = tuple(func.param_names)
        if len(params) < 2 or func.ctx.scope.kind != "module":
            return None
        twin = self._twins().get((params, name))
        if twin is not None and twin != func.name:
            return CopiedByTwin(twin, name, "")
        project = self._project()
        found = project.host_copy_twin(params, name) if project is not None else None
        return CopiedByTwin(found[0], name, found[1]) if found is not None else None

    def _twins(self) -> Dict[Tuple[tuple, str], str]:
        if self._host_copies is None:
            self._host_copies = {}
            for site in self.collected.calls_by_name.get("numpy", ()):
                func = site.call.func
                if site.call.args or not isinstance(func, cst.Attribute):
                    continue
                name = host_copied_name(func.value)
                if name is None:
                    continue
                owner = site.ctx.scope.resolve(name)
                if owner is None or owner.func is None or owner is not site.ctx.scope:
                    continue
                bindings = owner.bindings[name]
                if len(bindings) != 1 or bindings[0].how != PARAM:
                    continue  # rebound in the function: not what the caller gave
                info = owner.func
                if info.cls is None and info.ctx.scope.kind == "module":
                    self._host_copies.setdefault((tuple(info.param_names), name), info.name)
        return self._host_copies

    def bindings_of(self, target, scope: Scope) -> List[tuple]:
        """(value, scope, unpacking path, order) of each assignment to a name or ``self``
        attribute."""
        return assignments_of(target, scope, self.kinds)


def copied_to_host(expr: cst.BaseExpression) -> bool:
    """Whether ``expr``'s value was copied off the device along its chain of tensor methods
    and subscripts (``out.argmax(1).cpu()``, ``out.cpu().numpy()[0]``, ``loss.item()``): a
    model's output so copied meets a CPU label without failing (``host_copied_name`` below
    asks which name such a chain starts from)."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            method = expr.func.attr.value
            if method in api.HOST_COPY_METHODS:
                return True
            if method in api.ACCELERATOR_MOVE_METHODS or method not in api.TENSOR_METHODS:
                return False
            expr = expr.func.value
        else:
            return False


def host_copy_chain(expr: cst.BaseExpression,
                    through: frozenset = api.HOST_COPY_CHAIN_METHODS) -> Tuple[cst.BaseExpression, bool]:
    """Walks a chain of tensor methods inward, through ``.cpu()``, ``.to("cpu")`` and the
    methods ``through``: (the expression the walk stopped at, whether it passed a copy to the
    host). ``y.detach().cpu()`` gives (``y``, True), ``y.int()`` (``y``, False)."""
    copied = False
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        method = expr.func.attr.value
        if method == "cpu" and not expr.args:
            copied = True
        elif method == "to" and len(expr.args) == 1 and isinstance(
                expr.args[0].value, cst.SimpleString) and \
                expr.args[0].value.evaluated_value == "cpu":
            copied = True
        elif method not in through:
            break
        expr = expr.func.value
    return expr, copied


_HOST_COPY_CHAIN_TO_NUMPY = api.HOST_COPY_CHAIN_METHODS | {"numpy"}


def _host_copy(expr: cst.BaseExpression) -> bool:
    """``y.detach().cpu()``, ``y.cpu().numpy()``, ``y.to("cpu").float()``: a chain of tensor
    methods whose copy to the host comes last among its moves."""
    return host_copy_chain(expr, _HOST_COPY_CHAIN_TO_NUMPY)[1]


def host_copied_name(expr: cst.BaseExpression) -> Optional[str]:
    """``y.cpu()``, ``y.detach().cpu()``, ``y.cpu().detach()``, ``y.to("cpu")``: the name
    ``y`` that a chain of tensor methods, one of them a copy to the host, starts from."""
    root, copied = host_copy_chain(expr)
    return root.value if copied and isinstance(root, cst.Name) else None


def assignments_of(target, scope: Scope, kinds: KindInference) -> List[tuple]:
    """(value, scope, unpacking path, order) of each assignment to a name or ``self``
    attribute (``Placement.bindings_of``; needs only the kinds)."""
    if isinstance(target, cst.Name):
        return [(b.value, b.ctx.scope, b.path, b.order) for b in scope.lookup(target.value)
                if b.how == ASSIGN]
    if isinstance(target, cst.Attribute):
        # (its class's and its base classes' of this file)
        return [(b.value, b.ctx.scope, b.path, b.order)
                for b in kinds.attribute_assignments(target, scope)]
    return []


def unpacked_element(value, path) -> Optional[cst.BaseExpression]:
    """What ``a, b = x, y`` binds at unpacking ``path`` when the value is a display (``y`` at
    ``(1,)``); ``value`` itself for the empty path; None past a starred element, an index out
    of the display, or a value that is no display."""
    for index in path:
        if not isinstance(value, (cst.Tuple, cst.List)) or index >= len(value.elements) \
                or isinstance(value.elements[index], cst.StarredElement):
            return None
        value = value.elements[index].value
    return value


def _reads_a_device(device) -> bool:
    """``x.device`` (as written: ``Placement.follows_a_value`` says whose)."""
    return isinstance(device, cst.Attribute) and device.attr.value == "device"


def _torch_function(call: cst.Call, qualified: Optional[str]):
    """(its name in torch, its ``device=`` argument or None) when ``call``, whose callee
    resolves to ``qualified``, is a torch function that returns tensors; else None. Both
    placements start from it, then read the device each their own way."""
    if qualified is None or not (
            api.is_tensor_function(qualified) or qualified in api.LEGACY_CONSTRUCTORS
            or api.is_tensor_parts_function(qualified)):
        return None
    device = keyword_value(call, "device")
    if isinstance(device, cst.Name) and device.value == "None":
        device = None  # ``device=None``: the default device, as without the argument
    return qualified.rpartition(".")[2], device


def returns_torch_tensors(call: cst.Call) -> bool:
    """``tokenizer(text, return_tensors="pt")``: a Hugging Face preprocessor asked for torch
    tensors, which it makes on the CPU."""
    value = keyword_value(call, api.RETURN_TENSORS_KEYWORD)
    return value is not None and string_value(value) == api.RETURN_TENSORS_TORCH


def plain_function_named(kinds: KindInference, func, scope: Scope):
    """The ``FunctionInfo`` of the plain top-level function of this file that ``func`` (a
    call's callee) names, whose call gives what its body returns: not a method, a nested
    function, a generator, a coroutine or a decorated function; else None."""
    if not isinstance(func, cst.Name):
        return None
    kind = kinds.kind_of(func, scope)
    if not isinstance(kind, K.FuncRef):
        return None
    info = kind.info
    if info.cls is not None or info.opaque_return or info.scope is None or \
            info.ctx.scope.kind != "module":
        return None
    return info


def argument_for_parameter(call: cst.Call, function, name: str, bound: bool = False):
    """What ``call`` passes for the parameter ``name`` of ``function`` (a ``FunctionInfo``),
    by keyword or by position (a keyword-only parameter by keyword alone); None when it
    passes nothing for it or spreads ``*args`` / ``**kwargs``. ``bound``: a method called on
    an instance (``self.helper(x)``), whose first parameter the call does not pass."""
    if bound and function.cls is not None and function.self_name is None:
        bound = False  # a static method called on ``self``: it is passed every argument
    if name not in function.param_names or (bound and function.param_names[0] == name):
        return None
    index = K.positional_index(function, function.param_names.index(name))
    return K.argument_passed(call, name, index - 1 if bound and index > 0 else index)


def _container_root(expr) -> Optional[str]:
    """``results`` of ``results``, ``results["loss"]`` (a subscript of it), else None."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _tensor_test_of(test, kinds: KindInference, scope: Scope) -> Optional[str]:
    """``x`` of ``isinstance(x, torch.Tensor)``, else None."""
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name)
            and test.func.value == "isinstance" and len(test.args) == 2
            and isinstance(test.args[0].value, cst.Name)):
        return None
    return test.args[0].value.value if kinds.qualname(test.args[1].value, scope) == \
        "torch.Tensor" else None


def _builtin_number(expr, scope) -> bool:
    """``len(labels)``, ``float(n)``: a Python builtin that gives a number (not one the file
    or an import rebinds)."""
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and \
        expr.func.value in api.NUMBER_BUILTINS and scope is not None and \
        scope.resolve(expr.func.value) is None


def loop_item_source(iterable, path: tuple) -> Optional[cst.BaseExpression]:
    """What a name a ``for`` target binds at unpacking ``path`` takes its items from: ``xs``
    for ``x`` of ``for x in xs``, looked through ``enumerate`` and ``zip`` (``a`` of ``for i,
    (a, b) in enumerate(zip(xs, ys))`` is an item of ``xs``); None for ``enumerate``'s count,
    an item unpacked further (``for a, b in pairs``), or the items of a call of a bare name
    (``range(n)``)."""
    while path and isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
            and iterable.func.value in api.LOOP_WRAPPERS:
        args = [a.value for a in iterable.args if a.keyword is None and not a.star]
        index = path[0]
        if iterable.func.value == "enumerate":
            index -= 1  # (0: the count)
        if not isinstance(index, int) or not 0 <= index < len(args) or \
                (iterable.func.value == "enumerate" and index != 0):
            return None
        iterable, path = args[index], path[1:]
    if path or (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name)):
        return None  # (``range(n)``, ``zip`` of ``zip``: not followed)
    return iterable


def target_paths(target, path: tuple = ()) -> List[Tuple[str, tuple]]:
    """(name, unpacking path) of each name a ``for`` (or assignment) target binds."""
    if isinstance(target, cst.Name):
        return [(target.value, path)]
    if isinstance(target, (cst.Tuple, cst.List)) and \
            not any(isinstance(e, cst.StarredElement) for e in target.elements):
        return [found for index, e in enumerate(target.elements)
                for found in target_paths(e.value, path + (index,))]
    return []