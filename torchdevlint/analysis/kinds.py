"""What kind of value an expression holds: a tensor, a module, a loader, ... or unknown.

Flow-insensitive and conservative: a name has a kind only when every binding it has in its
scope agrees. ``UNKNOWN`` is the answer whenever the analysis cannot tell, and rules stay
silent on it.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from torchdevlint import torch_api as api
from torchdevlint.analysis.model import (
    ASSIGN, AUGMENT, CLASS, DEF, FOR, IMPORT, PARAM, WITH,
    Binding, ClassInfo, FunctionInfo, Scope, last_name, may_bind, reaching_bindings, string_value,
)


# Annotations of a parameter that holds a list or tuple of values.
_SEQUENCE_ANNOTATIONS = frozenset(("list", "List", "tuple", "Tuple", "Sequence"))


class Kind:
    __slots__ = ()


class _Simple(Kind):
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


TENSOR = _Simple("TENSOR")
MODULE = _Simple("MODULE")  # an nn.Module: .to() moves it in place
PRETRAINED = _Simple("PRETRAINED")  # a Hugging Face model: a module whose call gives MODEL_OUTPUT
LOADER = _Simple("LOADER")  # a DataLoader-like iterable of batches
DATASET = _Simple("DATASET")
BATCH = _Simple("BATCH")  # one item of a loader, structure unknown (tensor, tuple, dict, BatchEncoding)
ENCODING = _Simple("ENCODING")  # a Hugging Face BatchEncoding: .to() moves it in place
TOKENIZER = _Simple("TOKENIZER")
MODEL_OUTPUT = _Simple("MODEL_OUTPUT")
DEVICE = _Simple("DEVICE")
OTHER = _Simple("OTHER")  # known to be neither a tensor nor a module (numbers, strings, None, ...)
UNKNOWN = _Simple("UNKNOWN")
_PENDING = _Simple("PENDING")  # a binding being evaluated (recursion): ignored when combining

MODULE_LIKE = (MODULE, PRETRAINED)


class Qual(Kind):
    """A name that refers to something imported: ``torch.nn.functional``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other) -> bool:
        return isinstance(other, Qual) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"Qual({self.name})"


class _Ref(Kind):
    __slots__ = ("info",)

    def __init__(self, info) -> None:
        self.info = info

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.info is self.info

    def __hash__(self) -> int:
        return id(self.info)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.info.name})"


class ClassRef(_Ref):
    """A class defined in this file."""


class Instance(_Ref):
    """An instance of a class defined in this file."""


class FuncRef(_Ref):
    """A function defined in this file."""


class TupleKind(Kind):
    __slots__ = ("items",)

    def __init__(self, items: Tuple[Kind, ...]) -> None:
        self.items = items

    def __eq__(self, other) -> bool:
        return isinstance(other, TupleKind) and other.items == self.items

    def __hash__(self) -> int:
        return hash(self.items)

    def __repr__(self) -> str:
        return f"Tuple{self.items}"


class Iterable(Kind):
    """An iterable whose items have a known kind (``model.parameters()``)."""

    __slots__ = ("item",)

    def __init__(self, item: Kind) -> None:
        self.item = item

    def __eq__(self, other) -> bool:
        return isinstance(other, Iterable) and other.item == self.item

    def __hash__(self) -> int:
        return hash(("iter", self.item))


def combine(kinds) -> Kind:
    """The kind of a value that may come from any of ``kinds``: known only if they agree."""
    result: Optional[Kind] = None
    for kind in kinds:
        if kind is _PENDING:
            continue
        if result is None:
            result = kind
        elif kind != result:
            if result in MODULE_LIKE and kind in MODULE_LIKE:
                result = MODULE
            else:
                return UNKNOWN
    return result if result is not None else UNKNOWN


# The kinds a parameter takes from the arguments every call of its function passes (issue 28:
# ``def evaluate(a, b, c)`` called as ``evaluate(model, DataLoader(...), nn.MSELoss())`` is known
# by what it is given, not by its parameters' names). A tensor too (``WeightedLoss(torch.tensor(
# [1., 2.]))`` gives ``self.weight = weight`` a tensor, issue 28); where it is, is left to the
# placement, whose walk follows values across calls with their devices.
_FROM_CALLERS = (TENSOR, LOADER, DATASET, MODULE, PRETRAINED, DEVICE)


class KindInference:
    def __init__(self, collected=None) -> None:
        # the traversal's call sites, for the kinds of parameters (``caller_arguments``)
        self._collected = collected
        self._expr_memo: Dict[int, Kind] = {}
        self._derived: Dict[int, list] = {}  # id(class) -> ``derived_classes``
        self._name_memo: Dict[Tuple[int, str], Kind] = {}
        self._return_memo: Dict[int, Kind] = {}
        self._class_memo: Dict[int, Optional[bool]] = {}
        self._lightning_memo: Dict[int, bool] = {}
        self._attr_memo: Dict[Tuple[int, str], Kind] = {}
        self._instance_calls: Dict[int, list] = {}  # id(class) -> ``instance_call_sites``

    # -- names and qualified names -----------------------------------------------------

    def qualname(self, expr: cst.BaseExpression, scope: Scope) -> Optional[str]:
        """``T.nn.functional.relu`` -> "torch.nn.functional.relu" when ``T`` is ``import torch as T``."""
        if isinstance(expr, cst.Attribute):
            base = self.qualname(expr.value, scope)
            return f"{base}.{expr.attr.value}" if base else None
        if isinstance(expr, cst.Name):
            qualified = None
            for binding in scope.lookup(expr.value):
                if binding.how == IMPORT:
                    if qualified is not None and qualified != binding.value:
                        return None
                    qualified = binding.value
                elif not (binding.how == ASSIGN and isinstance(binding.value, cst.Name)
                          and binding.value.value == "None"):
                    return None  # also rebound to something else: not reliably the import
            return qualified
        return None

    def passed_through(self, call: cst.BaseExpression, scope: Scope) -> Optional[cst.BaseExpression]:
        """The argument that ``call`` returns as it is (``Variable(x)`` -> ``x``), else None.
        The one answer for every provider and rule that follows a value through calls."""
        if isinstance(call, cst.Call) and call.args and call.args[0].keyword is None and \
                not call.args[0].star and self.qualname(call.func, scope) in api.VALUE_WRAPPERS:
            return call.args[0].value
        return None

    def is_cuda_tensor_type(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
        """``torch.cuda.FloatTensor`` (also as the string ``"torch.cuda.FloatTensor"``), or a
        name bound to one, in either branch of a choice (``Tensor = torch.cuda.FloatTensor if
        cuda else torch.FloatTensor``: chosen at runtime, it is the accelerator's where there
        is one): ``x.type(Tensor)`` copies ``x`` to the GPU."""
        if isinstance(expr, cst.IfExp):
            return self.is_cuda_tensor_type(expr.body, scope, depth) or \
                self.is_cuda_tensor_type(expr.orelse, scope, depth)
        text = string_value(expr)
        if text is None:
            text = self.qualname(expr, scope)
        if text is not None:
            return bool(api.CUDA_TENSOR_TYPE_RE.match(text))
        if isinstance(expr, cst.Name) and depth < 3:
            return any(b.how == ASSIGN and not b.path and b.value is not None and
                       self.is_cuda_tensor_type(b.value, b.ctx.scope, depth + 1)
                       for b in scope.lookup(expr.value))
        return False

    def name_kind(self, name: str, scope: Scope) -> Kind:
        owner = scope.resolve(name)
        if owner is None:
            if name in api.NON_TENSOR_BUILTINS or name in ("None", "True", "False"):
                return OTHER
            return LOADER if "loader" in name.lower() else UNKNOWN
        key = (id(owner), name)
        kind = self._name_memo.get(key)
        if kind is None:
            self._name_memo[key] = _PENDING
            kind = combine(self.binding_kind(b) for b in owner.bindings[name])
            if kind is UNKNOWN and "loader" in name.lower():
                kind = LOADER
            self._name_memo[key] = kind
        return kind

    def binding_kind(self, binding: Binding) -> Kind:
        how = binding.how
        if how == ASSIGN:
            return self.element_kind(self.kind_of(binding.value, binding.ctx.scope), binding.path)
        if how == FOR:
            item = self.item_kind(binding.value, binding.ctx.scope)
            return self.element_kind(item, binding.path)
        if how == PARAM:
            return self._param_kind(binding)
        if how == IMPORT:
            return Qual(binding.value)
        if how == DEF:
            return FuncRef(binding.value)
        if how == CLASS:
            return ClassRef(binding.value)
        if how == AUGMENT:
            return _PENDING  # ``x += y`` keeps whatever kind x already had
        if how == WITH:
            return UNKNOWN
        return UNKNOWN

    def _param_kind(self, binding: Binding) -> Kind:
        param, func, index = binding.value
        if func is not None and index == 0 and func.self_name == param.name.value:
            # (``cls`` of a ``@classmethod`` is the class: ``model = cls(...)`` builds one)
            return ClassRef(func.cls) if func.binds_class else Instance(func.cls)
        if param.annotation is not None:
            return self.annotation_kind(param.annotation.annotation, binding.ctx.scope)
        passed = self.caller_arguments(binding)
        if passed:
            kind = combine(self.kind_of(argument, site.ctx.scope) for argument, site in passed)
            # (and an instance of a class of the file, a module or a plain one: an RL
            # agent handed to ``train(args, env, agent)``, whose ``agent.act(obs)`` then
            # reads the agent's own methods)
            if kind in _FROM_CALLERS or isinstance(kind, Instance):
                return kind
        return UNKNOWN

    def caller_arguments(self, binding: Binding, defaults: bool = False):
        """[(argument, call site)]: what each call of this file passes for the parameter of
        ``binding``, a plain function's (not ``*args``), or of a top-level class's ``__init__``
        (each construction of the class, ``Evaluator(model, loader)``), by position or
        keyword, or of another method (its calls through instances of its class:
        ``_method_arguments``); [] when no call of this file calls it; None when a call
        passes nothing for it (its default, or ``*args``), or some of its calls were analysed
        apart, and for a class that a class of this file derives from (its
        ``super().__init__(...)`` passes other values; an override runs in its place). With
        ``defaults``, a call that passes nothing gives the parameter's default where that is a
        literal list or tuple (a name or a call there is read in the scope of the ``def``)."""
        param, func, index = binding.value
        if self._collected is None or func is None or param.star in ("*", "**"):
            return None
        position = positional_index(func, index)
        called, target, reference = func.name, func, FuncRef
        targets = None
        if func.cls is not None:
            cls = func.cls
            static = is_static(func)
            if (index == 0 and not static) or cls.ctx.scope.kind != "module":
                return None
            derived = self.derived_classes(cls)
            if derived and (func.name != "__init__" or any(
                    "__init__" in other.methods for other in derived)):
                return None
            if not static:
                position = position - 1 if position > 0 else -1  # (``self`` is not passed)
            if func.name != "__init__":
                return self._method_arguments(func, param.name.value, position, static)
            # (the constructions of the class, and of the classes of the file that derive
            # from it without an ``__init__`` of their own: they run this one, with what
            # their constructions pass; the Scene-Text-Recognition-Recommendations
            # ``Evaluator(model, ...)`` of ``BaseEvaluator.__init__(self, model, ...)``)
            called, target, reference = cls.name, cls, ClassRef
            targets = {id(cls): cls.name, **{id(other): other.name for other in derived}}
        names = set(targets.values()) if targets else {called}
        if names & self._collected.unseen_call_names:
            return None
        name = param.name.value
        default = param.default if defaults and isinstance(param.default, (cst.List, cst.Tuple)) \
            else None
        found = []
        for site in [site for called in sorted(names)
                     for site in self._collected.calls_by_name.get(called, ())]:
            callee = self.kind_of(site.call.func, site.ctx.scope)
            if not (isinstance(callee, reference) and (
                    callee.info is target if targets is None else id(callee.info) in targets)):
                continue
            argument = argument_passed(site.call, name, position)
            if argument is None and default is not None and not any(
                    a.star for a in site.call.args):
                argument = default
            if argument is None:
                return None
            found.append((argument, site))
        return found

    def attribute_assignments(self, target: cst.Attribute, scope: Scope) -> List[Binding]:
        """The assignments of ``target``, an attribute of an object of a class of this file
        (``self.dp``, ``evaluator._cpu_device``: ``attribute_bindings`` of its class), or []
        when the object is of no such class."""
        owner = self.kind_of(target.value, scope)
        if not isinstance(owner, Instance):
            return []
        return self.attribute_bindings(owner.info, target.attr.value)

    def attribute_bindings(self, info: ClassInfo, name: str) -> List[Binding]:
        """The assignments of ``self.NAME`` in the methods of ``info`` and of its base classes
        of this file (``class_chain``): an attribute a base class sets is the subclass's too
        (``self.model`` that ``BaseEvaluator.__init__`` sets, read in ``Evaluator``)."""
        return [b for cls in self.class_chain(info) for b in cls.attributes.get(name, ())]

    def derived_classes(self, cls) -> list:
        """The classes of this file that derive from ``cls``, directly or not (by the last
        name of a base: ``class Evaluator(BaseEvaluator)``). Once per class: a method that
        calls ``self.NAME(...)`` and each constructor parameter ask it again."""
        known = self._derived.get(id(cls))
        if known is None:
            known = self._derived[id(cls)] = self._derived_classes(cls)
        return known

    def _derived_classes(self, cls) -> list:
        found, names, changed = [], {cls.name}, True
        while changed:
            changed = False
            for other in self._collected.classes:
                if other is not cls and other not in found and \
                        any(last_name(base) in names for base in other.bases):
                    found.append(other)
                    names.add(other.name)
                    changed = True
        return found

    def _method_arguments(self, method, name: str, position: int, static: bool = False):
        """``caller_arguments`` of a method (issue 28: a tracker's ``match(bboxes, labels,
        ...)``, a trainer's ``self.train_epoch(model, loader)``): its calls through an
        instance of its class, ``obj.NAME(...)`` of ``obj = Cls(...)`` or ``self.NAME(...)``
        in a method of the class, a class that is no ``nn.Module`` (a module's methods
        run on its device with what ``forward`` is given: ``modules.MethodDevices`` follows
        those). A ``@staticmethod`` (``static``) is also called through its class
        (``Trainer.epoch_val(model, loader)``) and given no ``self``. Not a dunder, nor a class
        or property method, nor one decorated otherwise (a decorator may pass other values).
        None where a call of that name is made on a receiver of unknown kind whose arguments
        may fit it (it may be this method, passed other values)."""
        if (method.node.decorators and not static) or self.class_is_module(method.cls) is not False:
            return None
        sites = self.method_call_sites(method, through_class=static)
        if sites is None:
            return None
        found = []
        for site in sites:
            argument = argument_passed(site.call, name, position)
            if argument is None:
                return None
            found.append((argument, site))
        return found

    def method_call_sites(self, method: FunctionInfo, through_class: bool = False):
        """The calls of this file that run ``method``: ``obj.NAME(...)`` on an instance of its
        class (``obj = Cls(...)``, ``self.NAME(...)`` in a method of the class) and, with
        ``through_class``, ``Cls.NAME(...)`` on the class itself (chexnet's trainer calls
        its self-less methods so, issue 28). Calls of that name on a receiver of another known
        kind (a tensor's, a module's, a library object's method: ``model.train()`` beside
        ``Trainer.train``) are not its calls. None where it cannot be told: a dunder, a
        name called on a receiver of unknown kind (it may be this method) or somewhere
        the analysis does not see."""
        if method.name.startswith("__") or method.name in self._collected.unseen_call_names:
            return None
        found = []
        for site in self._collected.calls_by_name.get(method.name, ()):
            func = site.call.func
            if not isinstance(func, cst.Attribute):
                continue  # a plain function of the same name
            receiver = self.kind_of(func.value, site.ctx.scope)
            if through_class and isinstance(receiver, ClassRef):
                if self.find_method(receiver.info, method.name) is method:
                    found.append(site)
                continue
            if not isinstance(receiver, Instance):
                if receiver in (UNKNOWN, _PENDING):
                    if not may_bind(site.call, method):
                        continue  # ``model.train()`` cannot be ``Trainer.train(loader, epochs)``
                    return None
                continue  # a tensor's, a module's, a library object's method
            if self.find_method(receiver.info, method.name) is method:
                found.append(site)
        return found

    def instance_call_sites(self, info: ClassInfo) -> List:
        """The calls of this file of an instance of the class ``info`` itself (``diffusion(x0,
        t)`` of ``diffusion = Diffusion(...).to(device)``), which run its ``forward`` (or its
        ``__call__``): by the kind of what is called, read where the call is."""
        known = self._instance_calls.get(id(info))
        if known is None:
            target = Instance(info)
            known = self._instance_calls[id(info)] = [
                site for group in self._collected.calls_by_name.values() for site in group
                if isinstance(site.call.func, cst.Name)
                and self.kind_of(site.call.func, site.ctx.scope) == target]
        return known

    def annotation_kind(self, annotation: cst.BaseExpression, scope: Scope) -> Kind:
        text = string_value(annotation)
        if text is not None:  # a forward reference: "torch.Tensor"
            if text in ("Tensor", "torch.Tensor"):
                return TENSOR
            return UNKNOWN
        # Optional[X], X | None
        if isinstance(annotation, cst.Subscript) and last_name(annotation.value) == "Optional":
            if len(annotation.slice) == 1 and isinstance(annotation.slice[0].slice, cst.Index):
                return self.annotation_kind(annotation.slice[0].slice.value, scope)
            return UNKNOWN
        if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
            sides = [annotation.left, annotation.right]
            sides = [s for s in sides if not (isinstance(s, cst.Name) and s.value == "None")]
            return self.annotation_kind(sides[0], scope) if len(sides) == 1 else UNKNOWN
        qualified = self.qualname(annotation, scope)
        if qualified is not None:
            if qualified in api.TENSOR_CLASSES or api.TENSOR_TYPE_RE.match(qualified):
                return TENSOR
            if qualified in api.MODULE_BASES:
                return MODULE
            if qualified in api.LOADER_CLASSES:
                return LOADER
            return UNKNOWN
        kind = self.kind_of(annotation, scope)
        if isinstance(kind, ClassRef):
            return Instance(kind.info)
        return UNKNOWN

    def is_sequence(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
        """Whether ``expr`` is a list or tuple of values, the data from which
        ``torch.tensor(data)`` makes a tensor with a dimension: a non-empty literal, a
        comprehension, a concatenation with one (``[1] + levels[:-1]``), a slice of one, a
        name every assignment of which is one, or a parameter annotated as a sequence
        (``levels: list[int]``, ``Sequence[float]``, ``tuple[int, ...]``) or, not annotated,
        given one by every call of this file (``caller_arguments``). (An empty literal
        is a placeholder that code fills later: not counted.)"""
        if depth > 4:
            return False
        if isinstance(expr, (cst.List, cst.Tuple)):
            return bool(expr.elements)
        if isinstance(expr, cst.ListComp):
            return True
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            return self.is_sequence(expr.left, scope, depth + 1) or \
                self.is_sequence(expr.right, scope, depth + 1)
        if isinstance(expr, cst.Subscript):
            return len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Slice) and \
                self.is_sequence(expr.value, scope, depth + 1)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            # ``torch.tensor(self.scales)`` of ``self.scales = [1.0, 2.0]``: every assignment
            # of the attribute in its class's methods (and its bases') is one
            func = scope.code_owner().func
            if func is None or func.cls is None or func.self_name != expr.value.value:
                return False
            bindings = self.attribute_bindings(func.cls, expr.attr.value)
            return bool(bindings) and all(self._holds_sequence(b, depth) for b in bindings)
        if not isinstance(expr, cst.Name):
            return False
        owner = scope.resolve(expr.value)
        bindings = owner.bindings.get(expr.value, ()) if owner is not None else ()
        return bool(bindings) and all(self._holds_sequence(b, depth) for b in bindings)

    def _holds_sequence(self, binding: Binding, depth: int) -> bool:
        if binding.how == PARAM:
            param = binding.value[0]
            annotation = param.annotation.annotation if param.annotation is not None else None
            if isinstance(annotation, cst.Subscript):
                annotation = annotation.value
            if annotation is not None:
                return last_name(annotation) in _SEQUENCE_ANNOTATIONS
            # not annotated: every call of this file passes one (``Norm([0.5, 0.5, 0.5])``),
            # or leaves a default that is one (``FocalLoss()`` of ``alpha=(0.25, 0.75)``)
            passed = self.caller_arguments(binding, defaults=True)
            return bool(passed) and all(self.is_sequence(argument, site.ctx.scope, depth + 1)
                                        for argument, site in passed)
        return binding.how == ASSIGN and not binding.path and \
            self.is_sequence(binding.value, binding.ctx.scope, depth + 1)

    # -- expressions --------------------------------------------------------------------

    def kind_of(self, expr: Optional[cst.BaseExpression], scope: Scope) -> Kind:
        if expr is None:
            return OTHER
        key = id(expr)
        kind = self._expr_memo.get(key)
        if kind is None:
            self._expr_memo[key] = _PENDING
            kind = self._compute(expr, scope)
            if kind is _PENDING:
                del self._expr_memo[key]  # depends on a binding still being evaluated
            else:
                self._expr_memo[key] = kind
        return kind

    def _compute(self, expr: cst.BaseExpression, scope: Scope) -> Kind:
        if isinstance(expr, cst.Name):
            return self.name_kind(expr.value, scope)
        if isinstance(expr, cst.Call):
            return self._call_kind(expr, scope)
        if isinstance(expr, cst.Attribute):
            return self._attribute_kind(expr, scope)
        if isinstance(expr, cst.Subscript):
            return self._subscript_kind(expr, scope)
        if isinstance(expr, cst.BinaryOperation):
            left = self.kind_of(expr.left, scope)
            right = self.kind_of(expr.right, scope)
            if TENSOR in (left, right):
                return TENSOR
            return _PENDING if _PENDING in (left, right) else UNKNOWN
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return OTHER
            operand = self.kind_of(expr.expression, scope)
            return operand if operand in (TENSOR, _PENDING) else UNKNOWN
        if isinstance(expr, cst.Comparison):
            if all(isinstance(c.operator, (cst.LessThan, cst.GreaterThan, cst.LessThanEqual,
                                           cst.GreaterThanEqual, cst.Equal, cst.NotEqual))
                   for c in expr.comparisons):
                operands = [expr.left] + [c.comparator for c in expr.comparisons]
                if any(self.kind_of(o, scope) is TENSOR for o in operands):
                    return TENSOR
            return OTHER
        if isinstance(expr, cst.IfExp):
            return combine((self.kind_of(expr.body, scope), self.kind_of(expr.orelse, scope)))
        if isinstance(expr, (cst.Tuple, cst.List)):
            if any(isinstance(e, cst.StarredElement) for e in expr.elements):
                return OTHER
            return TupleKind(tuple(self.kind_of(e.value, scope) for e in expr.elements))
        if isinstance(expr, cst.NamedExpr):
            return self.kind_of(expr.value, scope)
        if isinstance(expr, (cst.BaseNumber, cst.BaseString, cst.Dict, cst.Set, cst.DictComp,
                             cst.ListComp, cst.SetComp, cst.Lambda, cst.Ellipsis)):
            return OTHER
        return UNKNOWN

    def _attribute_kind(self, expr: cst.Attribute, scope: Scope) -> Kind:
        qualified = self.qualname(expr, scope)
        if qualified is not None:
            return Qual(qualified)
        attr = expr.attr.value
        owner = self.kind_of(expr.value, scope)
        if owner is TENSOR:
            if attr in api.TENSOR_ATTRIBUTES:
                return TENSOR
            if attr == "device":
                return DEVICE
            return OTHER if attr in api.NON_TENSOR_TENSOR_ATTRIBUTES \
                else UNKNOWN
        if owner in MODULE_LIKE:
            return TENSOR if attr in api.MODULE_STATE_ATTRIBUTES else UNKNOWN
        if owner is MODEL_OUTPUT:
            return TENSOR if attr in api.MODEL_OUTPUT_TENSORS else UNKNOWN
        if owner is ENCODING:
            return TENSOR if attr in ("input_ids", "attention_mask", "token_type_ids",
                                      "pixel_values") else UNKNOWN
        if owner is BATCH:
            return UNKNOWN
        if isinstance(owner, Instance):
            return self.instance_attribute_kind(owner.info, attr)
        if owner is UNKNOWN and "loader" in attr.lower():
            return LOADER
        return UNKNOWN

    def instance_attribute_kind(self, info: ClassInfo, attr: str) -> Kind:
        key = (id(info), attr)
        kind = self._attr_memo.get(key)
        if kind is not None:
            return kind
        self._attr_memo[key] = _PENDING
        kind = UNKNOWN
        for cls in self.class_chain(info):
            bindings = cls.attributes.get(attr)
            if bindings:
                kind = combine(self.kind_of(b.value, b.ctx.scope) for b in bindings)
                break
            method = cls.methods.get(attr)
            if method is not None:
                decorators = {last_name(d.decorator) for d in method.node.decorators}
                kind = self.return_kind(method) if decorators & {"property", "cached_property"} \
                    else UNKNOWN
                break
            if cls.scope is not None and attr in cls.scope.bindings:
                kind = combine(self.binding_kind(b) for b in cls.scope.bindings[attr])
                break
        if kind is UNKNOWN and "loader" in attr.lower():
            kind = LOADER
        self._attr_memo[key] = kind
        return kind

    def class_chain(self, info: ClassInfo):
        """The class and its base classes defined in this file (method resolution, roughly)."""
        seen = set()
        todo = [info]
        while todo:
            cls = todo.pop(0)
            if id(cls) in seen:
                continue
            seen.add(id(cls))
            yield cls
            for base in cls.bases:
                kind = self.kind_of(base, cls.ctx.scope)
                if isinstance(kind, ClassRef):
                    todo.append(kind.info)

    def _subscript_kind(self, expr: cst.Subscript, scope: Scope) -> Kind:
        qualified = self.qualname(expr.value, scope)
        if qualified is not None:
            return UNKNOWN  # typing constructs and the like
        owner = self.kind_of(expr.value, scope)
        if owner in (TENSOR, BATCH, MODEL_OUTPUT, ENCODING):
            return TENSOR
        if owner is MODULE:
            return MODULE  # nn.Sequential / ModuleList / ModuleDict items
        if isinstance(owner, TupleKind) and len(expr.slice) == 1:
            index = expr.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
                position = int(index.value.value, 0)
                if -len(owner.items) <= position < len(owner.items):
                    return owner.items[position]
        if owner in (UNKNOWN, OTHER, LOADER) and \
                "loader" in (last_name(expr.value) or "").lower():
            # ``dataloaders[phase]``: one of the loaders a dict or list of them holds, named
            # as a loader is (the transfer-learning tutorial's ``train_model``, issue 28; a
            # loader itself takes no subscript)
            return LOADER
        return UNKNOWN

    # -- calls --------------------------------------------------------------------------

    def _call_kind(self, call: cst.Call, scope: Scope) -> Kind:
        func = call.func
        qualified = self.qualname(func, scope)
        if qualified is not None:
            return self.qualified_call_kind(qualified, call, scope)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method == "from_pretrained":
                return self._pretrained_kind(func.value)
            receiver = self.kind_of(func.value, scope)
            kind = self._method_kind(receiver, method, call, scope)
            if kind is UNKNOWN and "dataloader" in method.lower():
                return LOADER
            return kind
        if isinstance(func, cst.Name):
            name = func.value
            if scope.resolve(name) is None:  # a builtin
                if name == "next" and call.args:
                    return self.item_kind(call.args[0].value, scope)
                if name == "iter" and call.args:
                    return self.kind_of(call.args[0].value, scope)
                return OTHER if name in api.NON_TENSOR_BUILTINS else UNKNOWN
        callee = self.kind_of(func, scope)
        kind = self.call_result_kind(callee, call, scope)
        if kind is UNKNOWN and isinstance(func, cst.Name) and "loader" in func.value.lower():
            return LOADER
        return kind

    def call_result_kind(self, callee: Kind, call: cst.Call, scope: Scope) -> Kind:
        if isinstance(callee, ClassRef):
            return Instance(callee.info)
        if isinstance(callee, FuncRef):
            return self.return_kind(callee.info)
        if callee is MODULE:
            return TENSOR
        if callee is PRETRAINED:
            return MODEL_OUTPUT
        if callee is TOKENIZER:
            return ENCODING
        if isinstance(callee, Instance):
            return self._instance_call_kind(callee.info)
        return UNKNOWN

    def _instance_call_kind(self, info: ClassInfo) -> Kind:
        if self.class_is_module(info) is not True:
            call = self.find_method(info, "__call__")
            return self.return_kind(call) if call is not None else UNKNOWN
        forward = self.find_method(info, "forward")
        if forward is not None:
            kind = self.return_kind(forward)
            if kind is not UNKNOWN:
                return kind
        return TENSOR  # the output of calling a module

    def find_method(self, info: ClassInfo, name: str) -> Optional[FunctionInfo]:
        """The method ``name`` an instance of ``info`` runs: its own or a base class's of this
        file (the first in the class chain that defines it)."""
        for cls in self.class_chain(info):
            if name in cls.methods:
                return cls.methods[name]
        return None

    def _method_kind(self, receiver: Kind, method: str, call: cst.Call, scope: Scope) -> Kind:
        if receiver is _PENDING:
            # ``x = x.view(...)`` / ``model = model.to(d)``: the rebinding keeps x's kind,
            # which the name's other bindings decide.
            if method in api.TENSOR_METHODS or method in api.MODULE_SELF_METHODS:
                return _PENDING
            return UNKNOWN
        if receiver is TENSOR:
            if method in api.TENSOR_METHODS:
                return TENSOR
            return OTHER if method in api.NON_TENSOR_TENSOR_METHODS else UNKNOWN
        if receiver in MODULE_LIKE or (isinstance(receiver, Instance)
                                       and self.class_is_module(receiver.info) is True):
            if method in api.MODULE_SELF_METHODS:
                return receiver
            if method in api.MODULE_TENSOR_ITERATORS:
                return Iterable(TENSOR)
            if method in api.MODULE_NAMED_TENSOR_ITERATORS:
                return Iterable(TupleKind((OTHER, TENSOR)))
            if method in api.MODULE_SUBMODULE_ITERATORS:
                return Iterable(MODULE)
            if method == "forward":
                return self.call_result_kind(receiver, call, scope)
            if receiver is PRETRAINED and method == "generate":
                return TENSOR
        if receiver is TOKENIZER and method in api.TOKENIZER_METHODS_RETURNING_ENCODING:
            return ENCODING
        if receiver is ENCODING and method == "to":
            return ENCODING
        if isinstance(receiver, Instance):
            found = self.find_method(receiver.info, method)
            return self.return_kind(found) if found is not None else UNKNOWN
        if isinstance(receiver, ClassRef):
            found = self.find_method(receiver.info, method)
            return self.return_kind(found) if found is not None else UNKNOWN
        if receiver is UNKNOWN and method in api.TENSOR_ONLY_METHODS:
            return TENSOR
        return UNKNOWN

    @staticmethod
    def _pretrained_kind(receiver: cst.BaseExpression) -> Kind:
        name = last_name(receiver) or ""
        if api.TOKENIZER_NAME_RE.search(name):
            return TOKENIZER
        if api.NON_MODEL_PRETRAINED_RE.search(name):
            return OTHER
        return PRETRAINED

    def qualified_call_kind(self, qualified: str, call: cst.Call, scope: Scope) -> Kind:
        head, _, tail = qualified.rpartition(".")
        if qualified in api.VALUE_WRAPPERS:
            inner = self.passed_through(call, scope)
            kind = UNKNOWN if inner is None else self.kind_of(inner, scope)
            return TENSOR if kind is UNKNOWN else kind
        if qualified in api.TENSOR_CLASSES or api.TENSOR_TYPE_RE.match(qualified):
            return TENSOR
        if head == "torch" and tail in api.TENSOR_FUNCTIONS:
            return TENSOR
        if qualified.startswith(api.TENSOR_NAMESPACES):
            return TENSOR
        if qualified == "torch.device":
            return DEVICE
        if qualified in api.LOADER_CLASSES:
            return LOADER
        if qualified in api.DATASET_CLASSES:
            return DATASET
        if qualified == "torch.compile" and call.args:
            kind = self.kind_of(call.args[0].value, scope)
            return kind if kind in MODULE_LIKE else UNKNOWN
        if qualified in api.MODULE_FACTORIES:
            return MODULE
        if tail == "from_pretrained":
            return self._pretrained_kind(call.func.value) if isinstance(call.func, cst.Attribute) \
                else UNKNOWN
        if qualified.startswith("transformers."):
            if api.TOKENIZER_NAME_RE.search(tail):
                return TOKENIZER
            return UNKNOWN
        if tail[:1].isupper() and qualified.startswith(api.MODULE_NAMESPACES):
            return MODULE
        if qualified.startswith("torchvision.models.") and tail[:1].islower():
            return MODULE  # torchvision.models.resnet18()
        if qualified.startswith(("torch.optim.", "torch.cuda.", "torch.backends.")):
            return OTHER
        return UNKNOWN

    def return_kind(self, info: FunctionInfo) -> Kind:
        key = id(info)
        kind = self._return_memo.get(key)
        if kind is not None:
            return kind
        if info.opaque_return:
            kind = UNKNOWN
        elif not info.returns:
            kind = OTHER  # falls off the end: None
        else:
            self._return_memo[key] = _PENDING
            kind = combine(self._returned_kind(value, ctx, point)
                           for (value, ctx), point in zip(info.returns, info.return_points))
        self._return_memo[key] = kind
        return kind

    def _returned_kind(self, value, ctx, point) -> Kind:
        """The kind of a ``return``'s value: a local name by the assignments that reach the
        ``return`` (``x = np.asarray(x); x = torch.from_numpy(x); return x`` returns a tensor,
        issue 28: a value rebound through a helper), anything else as it reads."""
        if isinstance(value, cst.Name):
            reaching = reaching_bindings(value.value, point)
            assigned = [b for b in reaching if b.how != PARAM]
            if assigned and len(assigned) < len(reaching) and all(
                    _under_not_none_test(b.ctx.conditions, value.value) for b in assigned):
                # ``if x is not None: x = torch.from_numpy(x)``, ``return x``: the parameter
                # reaches the ``return`` only as None (a tensor or None, as ``Optional[Tensor]``)
                reaching = assigned
            if reaching:
                return combine(self.binding_kind(b) for b in reaching)
        return self.kind_of(value, ctx.scope)

    # -- iteration and unpacking --------------------------------------------------------

    def item_kind(self, iterable: cst.BaseExpression, scope: Scope) -> Kind:
        """The kind of each item produced by iterating ``iterable``."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, (cst.Name, cst.Attribute)):
            name = last_name(iterable.func)
            positional = [a.value for a in iterable.args if a.keyword is None and not a.star]
            if name == "enumerate" and positional:
                return TupleKind((OTHER, self.item_kind(positional[0], scope)))
            if name == "zip" and positional:
                return TupleKind(tuple(self.item_kind(p, scope) for p in positional))
            if name in api.TRANSPARENT_ITER_WRAPPERS or name == "trange":  # (tqdm is one)
                if name != "trange_" and positional:  # trange(n) iterates numbers
                    return self.item_kind(positional[0], scope)
        kind = self.kind_of(iterable, scope)
        if kind in (LOADER, DATASET):
            return BATCH
        if kind is TENSOR:
            return TENSOR
        if kind is MODULE:
            return MODULE
        if isinstance(kind, Iterable):
            return kind.item
        if isinstance(kind, TupleKind) and kind.items:
            return combine(kind.items)
        return UNKNOWN

    @staticmethod
    def element_kind(kind: Kind, path) -> Kind:
        if kind is _PENDING:
            return kind
        for index in path:
            if isinstance(kind, TupleKind):
                if index >= len(kind.items):
                    return UNKNOWN
                kind = kind.items[index]
            elif kind in (TENSOR, BATCH):
                kind = TENSOR  # unpacking a tensor or a loader item gives tensors
            else:
                return UNKNOWN
        return kind

    # -- classes ------------------------------------------------------------------------

    def class_is_module(self, info: ClassInfo) -> Optional[bool]:
        """True: an nn.Module subclass. False: known not to be. None: cannot tell."""
        key = id(info)
        if key in self._class_memo:
            return self._class_memo[key]
        self._class_memo[key] = False  # a cycle in bases cannot make it a module
        verdict: Optional[bool] = False
        for base in info.bases:
            base_verdict = self._base_is_module(base, info.ctx.scope)
            if base_verdict is True:
                verdict = True
                break
            if base_verdict is None:
                verdict = None
        self._class_memo[key] = verdict
        return verdict

    def _base_is_module(self, base: cst.BaseExpression, scope: Scope) -> Optional[bool]:
        if isinstance(base, cst.Subscript):  # Generic[T], nn.Module subclasses rarely are
            base = base.value
        qualified = self.qualname(base, scope)
        if qualified is not None:
            return api.module_base(qualified)
        kind = self.kind_of(base, scope)
        if isinstance(kind, ClassRef):
            return self.class_is_module(kind.info)
        if isinstance(base, cst.Name) and scope.resolve(base.value) is None:
            return False  # a builtin: object, dict, Exception, ...
        return None

    def class_is_lightning(self, info: ClassInfo) -> bool:
        key = id(info)
        if key in self._lightning_memo:
            return self._lightning_memo[key]
        self._lightning_memo[key] = False
        verdict = False
        for base in info.bases:
            qualified = self.qualname(base, info.ctx.scope)
            if qualified is not None:
                if qualified in api.LIGHTNING_BASES or "lightning" in qualified.lower():
                    verdict = True
            else:
                kind = self.kind_of(base, info.ctx.scope)
                if isinstance(kind, ClassRef) and self.class_is_lightning(kind.info):
                    verdict = True
            if verdict:
                break
        self._lightning_memo[key] = verdict
        return verdict

    # -- questions the rules ask --------------------------------------------------------

    def is_tensor(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        return self.kind_of(expr, scope) is TENSOR

    def is_module(self, kind: Kind) -> bool:
        return kind in MODULE_LIKE or (isinstance(kind, Instance)
                                       and self.class_is_module(kind.info) is True)


def _under_not_none_test(conditions, name: str) -> bool:
    """Whether a test ``name is not None`` guards a node with these ``conditions`` (its
    body, not its ``else``)."""
    while conditions is not None:
        test = conditions[0]
        if isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) \
                and test.left.value == name and len(test.comparisons) == 1:
            target = test.comparisons[0]
            if isinstance(target.operator, cst.IsNot) and isinstance(target.comparator, cst.Name) \
                    and target.comparator.value == "None":
                return True
        conditions = conditions[1]
    return False


def argument_passed(call: cst.Call, name: str, index: int) -> Optional[cst.BaseExpression]:
    """The expression ``call`` passes for the parameter ``name`` (at position ``index``; -1:
    keyword only), or None (not passed, or ``*args`` / ``**kwargs`` spread)."""
    if any(arg.star for arg in call.args):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positional = [arg.value for arg in call.args if arg.keyword is None]
    return positional[index] if 0 <= index < len(positional) else None


def is_static(method: FunctionInfo) -> bool:
    """``@staticmethod`` and no other decorator, or no decorator and no ``self`` (a method
    only ever called through its class, ``builder._methods_called_through_their_class``):
    it is given its arguments as they are."""
    decorators = method.node.decorators
    if not decorators:
        return method.self_name is None and bool(method.param_names)
    return len(decorators) == 1 and isinstance(decorators[0].decorator, cst.Name) and \
        decorators[0].decorator.value == "staticmethod"


def positional_index(function, index: int) -> int:
    """The position a call passes the ``index``-th parameter of ``function`` at, or -1 for
    one passed by keyword alone (after ``*`` or ``*args``)."""
    params = function.node.params
    return index if index < len(params.posonly_params) + len(params.params) else -1
