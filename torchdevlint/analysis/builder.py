"""The one traversal of a file: scopes, bindings and the sites the rules look at.

LibCST's own visitor dispatch costs about as much as parsing (it visits every whitespace and
token node); this walker follows only the fields that can hold code and dispatches on the few
node types that matter, so a file costs a few percent of its parse time.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional

import libcst as cst

from torchdevlint import torch_api as api
from torchdevlint.analysis.devices import is_device_name
from torchdevlint.analysis.model import (
    ASSIGN, AUGMENT, CLASS, DEF, EXPECTS_FAILURE, FOR, HANDLES_FAILURE, HANDLES_NONE_DEREFERENCE, IMPORT, PARAM, UNKNOWN,
    WITH, AfterExit, Binding, OrElse, CallSite, ClassInfo, Ctx, DefaultOf, FunctionInfo, LoopSpan, Point, Scope, with_item_expects_failure,
    grad_mode_set_by,
    last_name,
    may_bind, next_order, says_it_fails,
    string_value,
)

# Fields that only hold syntax (whitespace, punctuation, operators): never walked.
_SYNTAX_FIELDS = frozenset(
    """
    lpar rpar comma semicolon header footer leading_lines lines_after_decorators
    trailing_whitespace equal colon dot asynchronous newline lbracket rbracket lbrace rbrace
    operator keyword arrow walrus star indent
    """.split()
)
_FIELDS: Dict[type, tuple] = {}


def _code_fields(cls: type) -> tuple:
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = tuple(
            f.name
            for f in dataclasses.fields(cls)
            if f.name not in _SYNTAX_FIELDS and not f.name.startswith("whitespace")
        )
        _FIELDS[cls] = fields
    return fields


# type -> whether it is a CST node class. ``isinstance(value, cst.CSTNode)`` goes through the
# ABC machinery (``CSTNode`` is abstract): 9 million checks were 4.2 of 78 s of a profile of
# torch's ``testing``, ``_dynamo``, ``distributed`` and ``nn``. A dictionary per type is exact
# (a node's class decides) and several times cheaper.
_NODE_TYPES: Dict[type, bool] = {}


def _is_node_type(cls: type) -> bool:
    known = _NODE_TYPES.get(cls)
    if known is None:
        known = _NODE_TYPES[cls] = issubclass(cls, cst.CSTNode)
    return known


def iter_children(node: cst.CSTNode):
    """Child nodes that can contain code, in source order."""
    node_types = _NODE_TYPES
    for name in _code_fields(type(node)):
        value = getattr(node, name)
        cls = type(value)
        if cls is tuple or cls is list:
            for item in value:
                known = node_types.get(type(item))
                if known or (known is None and _is_node_type(type(item))):
                    yield item
        else:
            known = node_types.get(cls)
            if known or (known is None and _is_node_type(cls)):
                yield value


# A lambda's or a nested def's body: code that runs later (``walk_code``)
_DEFERRED = (cst.Lambda, cst.FunctionDef)


def has_main_entry(module: cst.Module) -> bool:
    """The module has an ``if __name__ == "__main__":`` entry point at its top level: it runs
    as a program (``Guards.is_script``; a ``test_*.py`` file with one is no suite pytest
    merely collects: ``testcode.collected_by_pytest``)."""
    return any(isinstance(statement, cst.If) and isinstance(statement.test, cst.Comparison)
               and any(isinstance(n, cst.Name) and n.value == "__name__"
                       for n in walk_code(statement.test))
               for statement in module.body)


def walk_code(root: cst.CSTNode, into_functions: bool = False):
    """``root`` and the code-bearing nodes under it, pre-order in source order. A lambda's or
    a nested def's body is code that runs later, so it is not entered unless asked for."""
    stack = [root]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        yield node
        if into_functions or type(node) not in _DEFERRED:
            children = list(iter_children(node))
            children.reverse()
            extend(children)


def _passes_first_argument(site: CallSite) -> bool:
    """The call passes a first positional argument that is not its caller's own ``self``."""
    positional = [arg for arg in site.call.args if arg.keyword is None]
    if not positional or positional[0].star:
        return False
    first = positional[0].value
    caller = site.ctx.func
    return not (isinstance(first, cst.Name) and caller is not None
                and first.value in (caller.self_name, "self"))


def holds(root: cst.CSTNode, target: cst.CSTNode, into_functions: bool = False) -> bool:
    """Whether ``target`` is ``root`` or in its code (``walk_code``)."""
    return any(node is target for node in walk_code(root, into_functions))


def reads_name(expr: cst.CSTNode, name: str) -> bool:
    """Whether the code of ``expr`` holds the name ``name`` (``y = y.unsqueeze(0)`` reads
    ``y``)."""
    return any(isinstance(node, cst.Name) and node.value == name for node in walk_code(expr))


# Of the calls that end a test, the ones that stop the whole program, not just one test.
_STOP_CALLS = api.PROGRAM_STOP_CALLS
_EXIT_CALLS = _STOP_CALLS | frozenset("skip skipTest fail SkipTest".split())
_TRANSPARENT_DECORATORS = api.TRANSPARENT_DECORATORS


class DeviceUses:
    """Where the code names a device, recorded by the one traversal: the facts every device
    rule starts from (today TDL002's; tensors created off-device and operands on two devices
    start from the same places)."""

    def __init__(self) -> None:
        # calls with a ``device=`` keyword
        self.keyword_calls: List[CallSite] = []
        # torch.cuda.*Tensor types that are instantiated (or set as the tensor type): (Attribute, Ctx)
        self.cuda_tensor_types: List[tuple] = []
        # ids of expressions whose value is only inspected (compared, ``.type`` taken), so a
        # device built there is never used to place a tensor
        self.inspected: set = set()
        self.literal_assignments: List[tuple] = []  # (target, literal, Ctx) for "cuda..." values
        self.param_defaults: List[tuple] = []  # (Param, literal or device(...) call, Ctx)
        # ``torch.device("cuda")``-like calls that are used as devices where they stand:
        # ``with torch.device("cuda"):``, ``return torch.device("cuda")``, or assigned to a
        # device-named variable: (call, Ctx, assigned name or None)
        self.constructed_used: List[tuple] = []
        # Dereferences of a value of ``torch.accelerator.current_accelerator()``, which is None
        # without an accelerator: ``current_accelerator().type``, ``(acc := ...).type``, or
        # ``acc.type`` where ``acc`` was bound to that call earlier in the walk. (Attribute, Ctx)
        self.accelerator_reads: List[tuple] = []
        # ``with torch.device(X):`` blocks (by the last name; Placement checks the qualified
        # name and that X is no CPU): torch factories in the body create on X.
        # (the ``device(...)`` call, Ctx, the body)
        self.default_device_blocks: List[tuple] = []


class Collected:
    """Everything the traversal records for the rules."""

    def __init__(self) -> None:
        self.module_scope: Optional[Scope] = None
        self.calls_by_name: Dict[str, List[CallSite]] = {}
        self.devices = DeviceUses()  # where devices appear: what device rules ask
        self.for_loops: List[tuple] = []  # (For, Ctx, order)
        self.while_loops: List[tuple] = []  # (While, Ctx)
        # (Assign, Ctx) of each ``name[...] = value``: an item stored into a container (TDL008:
        # into a NumPy array)
        self.item_stores: List[tuple] = []
        self.imported_as: Dict[str, set] = {}  # qualified name -> names it is bound to
        self.functions: List[FunctionInfo] = []
        self.classes: List[ClassInfo] = []
        # Callees called in parts of the module analysed separately (torchdevlint.split):
        # their call sites are not in ``calls_by_name``.
        self.unseen_call_names: set = set()
        self.scopes: List[Scope] = []  # every scope, for Analysis.release
        self._sites: Optional[Dict[int, CallSite]] = None  # (``site_of``)

    def site_of(self, call: cst.Call) -> Optional[CallSite]:
        """The call site the traversal recorded for ``call`` (its context, its source order,
        the loop around it), or None; one dictionary for the file, built on first use."""
        sites = self._sites
        if sites is None:
            sites = self._sites = {id(site.call): site
                                   for group in self.calls_by_name.values() for site in group}
        return sites.get(id(call))


def _is_device_call(expr) -> bool:
    """``torch.device("cuda...")`` (by its last name; TDL002 checks the qualified name)."""
    return isinstance(expr, cst.Call) and last_name(expr.func) == "device" and any(
        _is_cuda_literal(arg.value) for arg in expr.args
        if arg.keyword is None or arg.keyword.value == "type")


def _off_cuda_test(test) -> bool:
    """``x.device != torch.device("cuda")``, ``device.type != "cuda"``, ``"cuda" not in
    str(d)``: a test that holds where something is *not* on CUDA."""
    if not isinstance(test, cst.Comparison) or not all(
            isinstance(c.operator, (cst.NotEqual, cst.IsNot, cst.NotIn)) for c in test.comparisons):
        return False
    return any(_is_cuda_literal(operand) or _is_device_call(operand)
               for operand in [test.left] + [c.comparator for c in test.comparisons])


_CURRENT_ACCELERATOR = api.CURRENT_ACCELERATOR.rpartition(".")[2]


def _is_current_accelerator_call(expr) -> bool:
    """A call of ``current_accelerator`` by its last name (the rules check the qualified
    name, ``torch_api.CURRENT_ACCELERATOR``)."""
    return isinstance(expr, cst.Call) and last_name(expr.func) == _CURRENT_ACCELERATOR


def _parallel(target, value) -> bool:
    """``a, b = x, y``: a tuple or list display of as many elements as the target, neither
    starred, so that each target receives its own element."""
    return isinstance(value, (cst.Tuple, cst.List)) \
        and len(value.elements) == len(target.elements) and not any(
            isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements))


def _is_cuda_literal(expr) -> bool:
    value = string_value(expr)
    return value is not None and value.startswith("cuda")


def tests_before_final_exit(statement: cst.If) -> Optional[cst.CSTNode]:
    """``if a: ... elif torch.cuda.is_available(): ... else: sys.exit(...)``: past this
    statement one of the tests held, so the rest of the block is guarded when one of them is a
    guard (dino's "Does not support training without GPU"). The tests, joined with ``or``."""
    tests = [statement.test]
    orelse = statement.orelse
    while isinstance(orelse, cst.If):
        tests.append(orelse.test)
        orelse = orelse.orelse
    if not isinstance(orelse, cst.Else) or not ends_in_exit(orelse.body, stops_program=True):
        return None
    joined = tests[0]
    for test in tests[1:]:
        joined = cst.BooleanOperation(left=joined, operator=cst.Or(), right=test)
    return joined


def exit_condition(statement, stops_program: bool = False) -> Optional[AfterExit]:
    """What going on past ``statement`` shows, when it leaves unless a test holds: ``assert
    t``, ``if T: return/raise/skip`` (with ``stops_program``: only an exit of the whole
    program), ``if a: ... elif b: ... else: exit``. None for any other statement."""
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Assert):
                return AfterExit(small.test, small.test)
        return None
    if not isinstance(statement, cst.If):
        return None
    if ends_in_exit(statement.body, stops_program):
        test = statement.test
        # ``if not available: exit`` requires ``available``; ``if args.cuda and not
        # available: exit`` requires nothing definite
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
        return AfterExit(test, test.expression if negated else None)
    joined = tests_before_final_exit(statement)
    return AfterExit(joined, joined) if joined is not None else None


def ends_in_exit(body: cst.BaseSuite, stops_program: bool = False) -> bool:
    statements = body.body
    if not statements:
        return False
    last = statements[-1]
    if isinstance(body, cst.IndentedBlock):
        if not isinstance(last, cst.SimpleStatementLine) or not last.body:
            return False
        last = last.body[-1]
    if isinstance(last, cst.Raise):
        return True
    if isinstance(last, (cst.Return, cst.Continue, cst.Break)):
        return not stops_program
    if isinstance(last, cst.Expr) and isinstance(last.value, cst.Call):
        return last_name(last.value.func) in (_STOP_CALLS if stops_program else _EXIT_CALLS)
    return False


class Builder:
    def __init__(self) -> None:
        self.out = Collected()
        self.loop: Optional[LoopSpan] = None  # the outermost loop of the current function
        # Names bound so far to a ``current_accelerator()`` call (usually none): their
        # dereferences are recorded in ``devices.accelerator_reads``.
        self.accelerator_names: set = set()

    # -- driving ------------------------------------------------------------------------

    def build(self, module: cst.Module) -> Collected:
        self.walk(module, None)
        self._methods_called_through_their_class()
        return self.out

    def _methods_called_through_their_class(self) -> None:
        """A method without a decorator whose calls all go through its class with its first
        parameter given (``ChexnetTrainer.epochVal(model, loader, ...)``, chexnet's trainer,
        issue 28) has no ``self``: Python 3 calls it as a plain function, and its first
        parameter is what the caller passes. Not where a call passes the caller's own
        ``self`` (``Base.forward(self, x)``: an explicit ``self``), where the method is called
        through an object (``self.epochVal(...)``, ``obj.epochVal(...)``), or where the first
        parameter is named ``self`` or ``cls``. (The walk took its first parameter for
        ``self`` and recorded ``model.x = ...`` as an attribute of the class: undone here.)"""
        candidates = [info for info in self.out.functions
                      if info.cls is not None and info.self_name not in (None, "self", "cls")
                      and not info.node.decorators and info.cls.ctx.scope.kind == "module"
                      and info.cls.methods.get(info.name) is info]
        changed = True
        while changed and candidates:  # (a caller found self-less passes no ``self`` then)
            changed = False
            for info in list(candidates):
                if self._called_through_its_class_only(info):
                    candidates.remove(info)
                    info.self_name = None
                    changed = True
                    cls = info.cls
                    for name, bindings in list(cls.attributes.items()):
                        kept = [b for b in bindings if b.ctx.func is not info]
                        if kept:
                            cls.attributes[name] = kept
                        else:
                            del cls.attributes[name]

    def _called_through_its_class_only(self, info: FunctionInfo) -> bool:
        cls = info.cls
        through_class = []
        for site in self.out.calls_by_name.get(info.name, ()):
            func = site.call.func
            if not isinstance(func, cst.Attribute):
                continue  # a plain function of the same name
            if isinstance(func.value, cst.Name) and func.value.value == cls.name:
                through_class.append(site)
            elif may_bind(site.call, info) and not (
                    isinstance(func.value, cst.Name) and func.value.value[:1].isupper()):
                return False  # it may be called through an object (another class's: not)
        return bool(through_class) and all(map(_passes_first_argument, through_class))

    def walk(self, node: cst.CSTNode, ctx: Optional[Ctx]) -> None:
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node, ctx)
            return
        for child in iter_children(node):
            self.walk(child, ctx)

    def _walk_all(self, nodes, ctx: Ctx) -> None:
        for node in nodes:
            self.walk(node, ctx)

    def _block(self, statements, ctx: Ctx) -> None:
        for statement in statements:
            self.walk(statement, ctx)
            after = self._condition_after(statement)
            if after is not None:
                ctx = ctx.with_condition(after)

    @staticmethod
    def _condition_after(statement):
        """A test that holds for the rest of the block once ``statement`` has run."""
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assert):
                    return AfterExit(small.test, small.test)
                if (isinstance(small, cst.Assign) and len(small.targets) == 1
                        and isinstance(small.targets[0].target, cst.Name)
                        and small.targets[0].target.value == "pytestmark"):
                    return small.value
            return None
        return exit_condition(statement)

    # -- scopes and bindings ------------------------------------------------------------

    def _bind_target(self, target, how: str, value, ctx: Ctx, value_ctx: Ctx, path=()) -> None:
        if isinstance(target, cst.Name):
            ctx.scope.add(target.value, Binding(how, value, path, value_ctx, target))
        elif isinstance(target, (cst.Tuple, cst.List)) and how == ASSIGN and not path \
                and _parallel(target, value):
            # ``x, y = x.to(d), y.to(d)``, ``self.mean, self.std = torch.zeros(n), ...``: each
            # target is bound to its own element, as two assignments would bind it (issue 28)
            for element, part in zip(target.elements, value.elements):
                self._bind_target(element.value, how, part.value, ctx, value_ctx)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for index, element in enumerate(target.elements):
                if isinstance(element, cst.StarredElement):
                    self._bind_target(element.value, UNKNOWN, None, ctx, value_ctx)
                else:
                    self._bind_target(element.value, how, value, ctx, value_ctx, path + (index,))
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, UNKNOWN, None, ctx, value_ctx)
        elif isinstance(target, cst.Attribute) and not path and how == ASSIGN:
            self._maybe_self_attribute(target, value, ctx)

    def _maybe_self_attribute(self, target: cst.Attribute, value, ctx: Ctx) -> None:
        """Record ``self.name = value`` in a method as an attribute of the class."""
        info = self._self_class(target.value, ctx)
        if info is not None:
            info.attributes.setdefault(target.attr.value, []).append(
                Binding(ASSIGN, value, (), ctx, target))

    @staticmethod
    def _self_class(expr, ctx: Ctx) -> Optional[ClassInfo]:
        if not isinstance(expr, cst.Name):
            return None
        bindings = ctx.scope.lookup(expr.value)
        if len(bindings) != 1 or bindings[0].how != PARAM:
            return None
        _param, func, index = bindings[0].value
        if index == 0 and func.cls is not None and func.self_name == expr.value:
            return func.cls
        return None

    # -- handlers -----------------------------------------------------------------------

    def _module(self, node: cst.Module, _ctx) -> None:
        scope = Scope("module", None, node)
        self.out.scopes.append(scope)
        self.out.module_scope = scope
        self._block(node.body, Ctx(scope, None, None, None))

    def _simple_line(self, node: cst.SimpleStatementLine, ctx: Ctx) -> None:
        if says_it_fails(node):
            ctx = ctx.with_condition(EXPECTS_FAILURE)  # "x.numpy()  # this will error"
        for small in node.body:
            handler = _SMALL_STATEMENT_HANDLERS.get(type(small))
            if handler is not None:
                handler(self, small, ctx)
            else:
                self.walk(small, ctx)

    def _suite(self, node, ctx: Ctx) -> None:
        if isinstance(node, cst.SimpleStatementSuite):
            self._simple_line(node, ctx)  # same shape: a list of small statements
        else:
            self._block(node.body, ctx)

    def _function(self, node: cst.FunctionDef, ctx: Ctx) -> None:
        decorators = [d.decorator for d in node.decorators]
        self._walk_all(decorators, ctx)
        in_class = ctx.scope.kind == "class"
        info = FunctionInfo(node, node.name.value, ctx, ctx.cls if in_class else None)
        self.out.functions.append(info)
        ctx.scope.add(node.name.value, Binding(DEF, info, (), ctx, node.name))
        if in_class and ctx.cls is not None:
            ctx.cls.methods[node.name.value] = info
        if node.asynchronous is not None or any(
                last_name(decorator_callee(d)) not in _TRANSPARENT_DECORATORS for d in decorators):
            info.opaque_return = True  # the call does not return what the body returns
        scope = Scope("function", ctx.scope, node, func=info)
        self.out.scopes.append(scope)
        info.scope = scope
        body_conditions = ctx.conditions
        for decorator in decorators:
            body_conditions = (decorator, body_conditions)
        # The body runs when called: only its own decorators set its grad mode.
        grad = next((mode for mode in map(grad_mode_set_by, decorators) if mode is not None), None)
        body_ctx = Ctx(scope, (node.name.value, body_conditions), info, ctx.cls, grad)
        self._params(node.params, info, ctx, body_ctx)
        if node.returns is not None:
            self.walk(node.returns.annotation, ctx)
        is_static = any(last_name(decorator_callee(d)) == "staticmethod" for d in decorators)
        info.binds_class = in_class and any(
            last_name(decorator_callee(d)) == "classmethod" for d in decorators)
        if in_class and info.param_names and not is_static:
            info.self_name = info.param_names[0]
        outer_loop, self.loop = self.loop, None
        self.walk(node.body, body_ctx)
        self.loop = outer_loop

    def _params(self, params: cst.Parameters, info: Optional[FunctionInfo], outer: Ctx,
                inner: Ctx) -> None:
        every = list(params.posonly_params) + list(params.params)
        if isinstance(params.star_arg, cst.Param):
            every.append(params.star_arg)
        every += list(params.kwonly_params)
        if params.star_kwarg is not None:
            every.append(params.star_kwarg)
        for index, param in enumerate(every):
            if param.annotation is not None:
                self.walk(param.annotation.annotation, outer)
            if param.default is not None:
                self.walk(param.default, outer if info is None
                          else outer.with_condition(DefaultOf(param.name.value, info)))
                name = param.name.value
                if is_device_name(name) and (
                        _is_cuda_literal(param.default) or _is_device_call(param.default)):
                    self.out.devices.param_defaults.append((param, param.default, inner))
            name = param.name.value
            if info is not None:
                info.param_names.append(name)
            inner.scope.add(name, Binding(PARAM, (param, info, index), (), inner, param.name))

    def _lambda(self, node: cst.Lambda, ctx: Ctx) -> None:
        scope = Scope("lambda", ctx.scope, node)
        self.out.scopes.append(scope)
        inner = Ctx(scope, ctx.conditions, ctx.func, ctx.cls)
        self._params(node.params, None, ctx, inner)
        self.walk(node.body, inner)

    def _class(self, node: cst.ClassDef, ctx: Ctx) -> None:
        decorators = [d.decorator for d in node.decorators]
        self._walk_all(decorators, ctx)
        for arg in node.bases:
            self.walk(arg.value, ctx)
        for arg in node.keywords:
            self.walk(arg.value, ctx)
        info = ClassInfo(node, ctx)
        self.out.classes.append(info)
        ctx.scope.add(node.name.value, Binding(CLASS, info, (), ctx, node.name))
        scope = Scope("class", ctx.scope, node)
        self.out.scopes.append(scope)
        info.scope = scope
        conditions = ctx.conditions
        for decorator in decorators:
            conditions = (decorator, conditions)
        self.walk(node.body, Ctx(scope, (node.name.value, conditions), None, info, ctx.grad))

    def _comprehension(self, node, ctx: Ctx) -> None:
        scope = Scope("comprehension", ctx.scope, node)
        self.out.scopes.append(scope)
        inner = Ctx(scope, ctx.conditions, ctx.func, ctx.cls, ctx.grad)  # runs right here
        comp = node.for_in
        first = True
        while comp is not None:
            iter_ctx = ctx if first else inner
            self.walk(comp.iter, iter_ctx)
            self._bind_target(comp.target, FOR, comp.iter, inner, iter_ctx)
            for condition in comp.ifs:
                self.walk(condition.test, inner)
            comp = comp.inner_for_in
            first = False
        if isinstance(node, cst.DictComp):
            self.walk(node.key, inner)
            self.walk(node.value, inner)
        else:
            self.walk(node.elt, inner)

    def _assign(self, node: cst.Assign, ctx: Ctx) -> None:
        self.walk(node.value, ctx)
        if _is_current_accelerator_call(node.value):
            self.accelerator_names.update(t.target.value for t in node.targets
                                          if isinstance(t.target, cst.Name))
        for target in node.targets:
            self._bind_target(target.target, ASSIGN, node.value, ctx, ctx)
            self._walk_target(target.target, ctx)
            if type(target.target) is cst.Subscript and type(target.target.value) is cst.Name:
                self.out.item_stores.append((node, ctx))
            if _is_cuda_literal(node.value):
                self.out.devices.literal_assignments.append((target.target, node.value, ctx))
            elif _is_device_call(node.value):
                self.out.devices.constructed_used.append((node.value, ctx, last_name(target.target)))

    def _ann_assign(self, node: cst.AnnAssign, ctx: Ctx) -> None:
        self.walk(node.annotation.annotation, ctx)
        if node.value is None:
            return
        self.walk(node.value, ctx)
        self._bind_target(node.target, ASSIGN, node.value, ctx, ctx)
        self._walk_target(node.target, ctx)
        if _is_cuda_literal(node.value):
            self.out.devices.literal_assignments.append((node.target, node.value, ctx))
        elif _is_device_call(node.value):
            self.out.devices.constructed_used.append((node.value, ctx, last_name(node.target)))

    def _aug_assign(self, node: cst.AugAssign, ctx: Ctx) -> None:
        self.walk(node.value, ctx)
        if isinstance(node.target, cst.Name):
            ctx.scope.add(node.target.value, Binding(AUGMENT, node.value, (), ctx, node.target))
        self._walk_target(node.target, ctx)

    def _walk_target(self, target, ctx: Ctx) -> None:
        """Targets can hold code too: ``a[f(x)] = ...``, ``obj.attr.x = ...``."""
        if isinstance(target, (cst.Attribute, cst.Subscript)):
            self.walk(target, ctx)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._walk_target(element.value, ctx)
        elif isinstance(target, cst.StarredElement):
            self._walk_target(target.value, ctx)

    def _expr_statement(self, node: cst.Expr, ctx: Ctx) -> None:
        if isinstance(node.value, cst.Call):
            self._call(node.value, ctx, statement=node)
        elif isinstance(node.value, cst.Tuple):
            # ``x.to(device), y.to(device)``: each call's value is discarded too (issue 28:
            # a tuple statement of two moves)
            for element in node.value.elements:
                if isinstance(element.value, cst.Call):
                    self._call(element.value, ctx, statement=node)
                else:
                    self.walk(element.value, ctx)
        else:
            self.walk(node.value, ctx)

    def _return(self, node: cst.Return, ctx: Ctx) -> None:
        if node.value is not None:
            self.walk(node.value, ctx)
            returned = node.value.elements if isinstance(node.value, cst.Tuple) else ()
            for value in [node.value] + [element.value for element in returned]:
                if _is_device_call(value):
                    self.out.devices.constructed_used.append((value, ctx, None))  # handed to callers
        if ctx.func is not None and ctx.scope.kind == "function":
            ctx.func.returns.append((node.value, ctx))
            ctx.func.return_points.append(Point(ctx, self.loop))

    def _yield(self, node: cst.Yield, ctx: Ctx) -> None:
        if ctx.func is not None and ctx.scope.kind == "function":
            ctx.func.opaque_return = True
        if node.value is not None:
            self.walk(node.value, ctx)

    def _for(self, node: cst.For, ctx: Ctx) -> None:
        self.walk(node.iter, ctx)
        span = self._enter_loop()
        self._bind_target(node.target, FOR, node.iter, ctx, ctx)
        self._walk_target(node.target, ctx)
        self.out.for_loops.append((node, ctx, next_order()))
        self.walk(node.body, ctx)
        self._leave_loop(span)
        if node.orelse is not None:
            self.walk(node.orelse.body, ctx)

    def _while(self, node: cst.While, ctx: Ctx) -> None:
        span = self._enter_loop()
        self.out.while_loops.append((node, ctx))
        self.walk(node.test, ctx)
        self.walk(node.body, ctx)
        self._leave_loop(span)
        if node.orelse is not None:
            self.walk(node.orelse.body, ctx)

    def _enter_loop(self) -> Optional[LoopSpan]:
        if self.loop is not None:
            return None  # an inner loop: the outermost one bounds every back edge
        self.loop = LoopSpan()
        return self.loop

    def _leave_loop(self, span: Optional[LoopSpan]) -> None:
        if span is not None:
            span.end = next_order()
            self.loop = None

    def _if(self, node: cst.If, ctx: Ctx) -> None:
        self.walk(node.test, ctx)
        guarded = ctx.with_condition(node.test)
        # ``if t.device != torch.device("cuda"): t = t.to(torch.device("cuda"))`` runs its body
        # where the tensor is not on CUDA, a machine without CUDA included: no guard there
        # (the ``else`` branch, and the code after ``if ...: return``, keep the test).
        self.walk(node.body, ctx if _off_cuda_test(node.test) else guarded)
        if node.orelse is not None:
            otherwise = ctx.with_condition(OrElse(node.test))
            if isinstance(node.orelse, cst.If):
                self._if(node.orelse, otherwise)
            else:
                self.walk(node.orelse.body, otherwise)

    def _ifexp(self, node: cst.IfExp, ctx: Ctx) -> None:
        self.walk(node.test, ctx)
        # (``x.to("cuda") if x.device != torch.device("cuda") else x``: read backwards too)
        self.walk(node.body, ctx if _off_cuda_test(node.test) else ctx.with_condition(node.test))
        self.walk(node.orelse, ctx.with_condition(OrElse(node.test)))

    def _boolean(self, node: cst.BooleanOperation, ctx: Ctx) -> None:
        # ``available() and x.cuda()``: the right side runs only when the left allows it.
        self.walk(node.left, ctx)
        self.walk(node.right, ctx.with_condition(node.left))

    def _with(self, node: cst.With, ctx: Ctx) -> None:
        body_ctx = ctx
        for item in node.items:
            self.walk(item.item, ctx)
            if item.asname is not None:
                self._bind_target(item.asname.name, WITH, item.item, ctx, ctx)
            if with_item_expects_failure(item.item):
                body_ctx = ctx.with_condition(EXPECTS_FAILURE)
            elif isinstance(item.item, cst.Call):
                if _is_device_call(item.item):
                    self.out.devices.constructed_used.append((item.item, ctx, None))  # default device
                if last_name(item.item.func) == "device" and item.item.args:
                    self.out.devices.default_device_blocks.append((item.item, ctx, node.body))
            grad = grad_mode_set_by(item.item)
            if grad is not None:
                body_ctx = body_ctx.with_grad(grad)
        self.walk(node.body, body_ctx)

    def _try(self, node: cst.Try, ctx: Ctx) -> None:
        # ``try: x = torch.device("cuda") ... except RuntimeError: <fall back>``: a short try
        # block whose handler catches what a missing GPU raises is a guard.
        body_ctx = ctx
        if len(node.body.body) <= _SHORT_TRY:
            if any(_catches(h, _DEVICE_ERRORS) for h in node.handlers):
                body_ctx = ctx.with_condition(HANDLES_FAILURE)
            elif any(_catches(h, _NONE_DEREFERENCE_ERRORS) for h in node.handlers):
                body_ctx = ctx.with_condition(HANDLES_NONE_DEREFERENCE)
        self.walk(node.body, body_ctx)
        for handler in node.handlers:
            self.walk(handler, ctx)
        if node.orelse is not None:
            self.walk(node.orelse, ctx)
        if node.finalbody is not None:
            self.walk(node.finalbody, ctx)

    def _comparison(self, node: cst.Comparison, ctx: Ctx) -> None:
        for operand in [node.left] + [c.comparator for c in node.comparisons]:
            self.out.devices.inspected.add(id(operand))
            if isinstance(operand, (cst.Tuple, cst.List, cst.Set)):
                self.out.devices.inspected.update(id(e.value) for e in operand.elements)
        for child in iter_children(node):
            self.walk(child, ctx)

    def _except(self, node, ctx: Ctx) -> None:
        if node.type is not None:
            self.walk(node.type, ctx)
        if node.name is not None and isinstance(node.name.name, cst.Name):
            ctx.scope.add(node.name.name.value, Binding(UNKNOWN, None, (), ctx, node.name.name))
        self.walk(node.body, ctx)

    def _named_expr(self, node: cst.NamedExpr, ctx: Ctx) -> None:
        self.walk(node.value, ctx)
        scope = ctx.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        if isinstance(node.target, cst.Name):
            scope.add(node.target.value, Binding(ASSIGN, node.value, (), ctx, node.target))
            if _is_current_accelerator_call(node.value):
                self.accelerator_names.add(node.target.value)

    def _match_capture(self, node, ctx: Ctx) -> None:
        if node.name is not None:
            ctx.scope.add(node.name.value, Binding(UNKNOWN, None, (), ctx, node.name))
        for child in iter_children(node):
            if child is not node.name:
                self.walk(child, ctx)

    def _match_mapping(self, node: cst.MatchMapping, ctx: Ctx) -> None:
        if node.rest is not None:
            ctx.scope.add(node.rest.value, Binding(UNKNOWN, None, (), ctx, node.rest))
        for element in node.elements:
            self.walk(element, ctx)

    def _import(self, node: cst.Import, ctx: Ctx) -> None:
        for alias in node.names:
            dotted = _dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                ctx.scope.add(alias.asname.name.value, Binding(IMPORT, dotted, (), ctx, alias))
                self.out.imported_as.setdefault(dotted, set()).add(alias.asname.name.value)
            else:
                top = dotted.split(".")[0]
                ctx.scope.add(top, Binding(IMPORT, top, (), ctx, alias))

    def _import_from(self, node: cst.ImportFrom, ctx: Ctx) -> None:
        if isinstance(node.names, cst.ImportStar):
            from_torch = not node.relative and node.module is not None \
                and _dotted(node.module).split(".")[0] == "torch"
            if ctx.scope.kind == "module" and not from_torch:
                # ``from models.common import *`` of a module that imports torch: a file that
                # reads ``torch`` without importing it has it from there (yolov5's old
                # ``onnx_export.py``: ``torch.load(opt.weights)``), and a ``torch`` that no
                # star import gives raises NameError anyway (``from torch import *`` binds
                # torch's names, not ``torch``)
                ctx.scope.add("torch", Binding(IMPORT, "torch", (), ctx, node))
            return
        module = "." * len(node.relative) + (_dotted(node.module) if node.module else "")
        for alias in node.names:
            name = _dotted(alias.name)
            qualified = f"{module}.{name}" if module and not module.endswith(".") else module + name
            bound = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound = alias.asname.name.value
            ctx.scope.add(bound, Binding(IMPORT, qualified, (), ctx, alias))
            self.out.imported_as.setdefault(qualified, set()).add(bound)

    def _global(self, node: cst.Global, ctx: Ctx) -> None:
        ctx.scope.global_names.update(item.name.value for item in node.names)

    def _nonlocal(self, node: cst.Nonlocal, ctx: Ctx) -> None:
        ctx.scope.nonlocal_names.update(item.name.value for item in node.names)

    def _attribute(self, node: cst.Attribute, ctx: Ctx) -> None:
        value = node.value
        if node.attr.value in api.DEVICE_PART_ATTRIBUTES:  # torch.device("cuda").type is only a string
            self.out.devices.inspected.add(id(value))
            if isinstance(value, cst.BooleanOperation):
                self.out.devices.inspected.update((id(value.left), id(value.right)))
        kind = type(value)
        if (kind is cst.Call and _is_current_accelerator_call(value)) or \
                (kind is cst.NamedExpr and _is_current_accelerator_call(value.value)) or \
                (kind is cst.Name and value.value in self.accelerator_names):
            self.out.devices.accelerator_reads.append((node, ctx))
        self.walk(value, ctx)

    def _call(self, node: cst.Call, ctx: Ctx, statement: Optional[cst.Expr] = None) -> None:
        site = CallSite(node, ctx, statement, self.loop)
        name = last_name(node.func)
        if name is not None:
            self.out.calls_by_name.setdefault(name, []).append(site)
            if name in api.REGISTERING_TENSOR_CALLS and len(node.args) >= 2:
                self._register_attribute(node, ctx)
            if _is_cuda_tensor_type(node.func):
                self.out.devices.cuda_tensor_types.append((node.func, ctx))
            elif name in api.TENSOR_TYPE_TAKING_CALLS and node.args \
                    and _is_cuda_tensor_type(node.args[0].value):
                self.out.devices.cuda_tensor_types.append((node.args[0].value, ctx))
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in ("device", "map_location"):
                self.out.devices.keyword_calls.append(site)
                break
        self.walk(node.func, ctx)
        values_ctx = ctx
        if name == "param":
            # ``pytest.param(torch.device("cuda"), marks=[skipif(not cuda_available), ...])``:
            # the values only reach a test when the marks let it run.
            marks = next((a.value for a in node.args
                          if a.keyword is not None and a.keyword.value == "marks"), None)
            if marks is not None:
                values_ctx = ctx.with_condition(marks)
        for arg in node.args:
            self.walk(arg.value, values_ctx)

    def _register_attribute(self, node: cst.Call, ctx: Ctx) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        info = self._self_class(func.value, ctx)
        attr = string_value(node.args[0].value)
        if info is not None and attr:
            info.attributes.setdefault(attr, []).append(
                Binding(ASSIGN, node.args[1].value, (), ctx, node))


# What the walk does per node type. Plain functions, not bound methods: a builder holding its
# own bound methods would be a reference cycle, and it holds the whole analysis, which holds
# the tree, so every tree would wait for the cyclic garbage collector to be freed.
_HANDLERS = {
    cst.Module: Builder._module,
    cst.SimpleStatementLine: Builder._simple_line,
    cst.SimpleStatementSuite: Builder._suite,
    cst.IndentedBlock: Builder._suite,
    cst.FunctionDef: Builder._function,
    cst.ClassDef: Builder._class,
    cst.Lambda: Builder._lambda,
    cst.ListComp: Builder._comprehension,
    cst.SetComp: Builder._comprehension,
    cst.GeneratorExp: Builder._comprehension,
    cst.DictComp: Builder._comprehension,
    cst.For: Builder._for,
    cst.While: Builder._while,
    cst.If: Builder._if,
    cst.IfExp: Builder._ifexp,
    cst.BooleanOperation: Builder._boolean,
    cst.With: Builder._with,
    cst.Try: Builder._try,
    cst.Comparison: Builder._comparison,
    cst.ExceptHandler: Builder._except,
    cst.ExceptStarHandler: Builder._except,
    cst.Call: Builder._call,
    cst.Attribute: Builder._attribute,
    cst.NamedExpr: Builder._named_expr,
    cst.Yield: Builder._yield,
    cst.MatchAs: Builder._match_capture,
    cst.MatchStar: Builder._match_capture,
    cst.MatchMapping: Builder._match_mapping,
    cst.Import: Builder._import,
    cst.ImportFrom: Builder._import_from,
    cst.Global: Builder._global,
    cst.Nonlocal: Builder._nonlocal,
}

_SMALL_STATEMENT_HANDLERS = {
    cst.Assign: Builder._assign,
    cst.AnnAssign: Builder._ann_assign,
    cst.AugAssign: Builder._aug_assign,
    cst.Expr: Builder._expr_statement,
    cst.Return: Builder._return,
}


_SHORT_TRY = 5
_DEVICE_ERRORS = frozenset("RuntimeError AssertionError Exception BaseException".split())
_NONE_DEREFERENCE_ERRORS = frozenset(("AttributeError",))


def _catches(handler, errors: frozenset) -> bool:
    if handler.type is None:
        return True  # a bare except
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    return any(last_name(t.value if isinstance(t, cst.Element) else t) in errors for t in types)


def _is_cuda_tensor_type(expr) -> bool:
    return (isinstance(expr, cst.Attribute) and expr.attr.value.endswith("Tensor")
            and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "cuda")


def decorator_callee(decorator: cst.BaseExpression) -> cst.BaseExpression:
    """What a decorator calls or names: ``dataclass`` of ``@dataclass(frozen=True)``."""
    return decorator.func if isinstance(decorator, cst.Call) else decorator


def _dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""
