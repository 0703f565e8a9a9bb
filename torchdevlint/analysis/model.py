"""The data the single traversal records: scopes, bindings, functions, classes, contexts."""

from __future__ import annotations

import itertools
import re
from typing import Dict, List, Optional, Tuple, Union

import libcst as cst

from torchdevlint import torch_api as api
from torchdevlint.positions import code_for_node

# Source order of bindings, call sites and loops (the traversal visits in source order), so
# that a rule can ask "which assignment was the last one before this loop?".
_ORDER = itertools.count()
next_order = _ORDER.__next__

# How a name got its value.
ASSIGN = "assign"  # value = an expression, path = unpacking indices
FOR = "for"  # value = the iterable, path = unpacking indices
WITH = "with"  # value = the context expression
PARAM = "param"  # value = the cst.Param
IMPORT = "import"  # value = the qualified name it refers to
DEF = "def"  # value = FunctionInfo
CLASS = "class"  # value = ClassInfo
AUGMENT = "augment"  # x += ...: keeps the kind it had
UNKNOWN = "unknown"  # except-as, match patterns, starred targets, ...

Path = Tuple[int, ...]

# Condition markers for code that is not expected to succeed on every machine.
EXPECTS_FAILURE = "<inside assertRaises/pytest.raises>"
HANDLES_FAILURE = "<inside a small try/except that catches the failure>"
# ...and one that catches only what dereferencing None raises (``except AttributeError``): no
# guard of a device, a guard of ``torch.accelerator.current_accelerator().type``.
HANDLES_NONE_DEREFERENCE = "<inside a small try/except that catches AttributeError>"

# A comment saying that the line it sits on (or the line under it) fails: a deliberate error
# demo of a teaching notebook ("# this will error", "# raises", "# error!", "# RuntimeError"),
# which is treated as the body of ``pytest.raises`` is (issue 28, cause 6). Specific words
# only: "# compute the error" or "# error handling" say nothing of the line failing.
_FAILS_COMMENT = re.compile(
    r"""\b(?:will|would|should|must|going\s+to|expected\s+to|is\s+supposed\s+to)\s+
          (?:error|fail|raise|crash|throw|break|not\s+work)
      | \#\s*(?:raises|errors|fails|crashes|throws)\b
      | \b(?:error|fails|oops)\s*!
      | \b(?:expect(?:ed)?|gives?|throws?|raises?)\s+(?:an?\s+)?(?:\w+Error|error|exception)\b
      | \#\s*(?:->\s*|=>\s*)?\w+Error\b""",
    re.IGNORECASE | re.VERBOSE)


def says_it_fails(statement: cst.CSTNode) -> bool:
    """Whether a comment on ``statement``'s line, or on the line right above it, says that the
    statement fails (``_FAILS_COMMENT``)."""
    comments = []
    trailing = getattr(statement, "trailing_whitespace", None)
    if trailing is not None and trailing.comment is not None:
        comments.append(trailing.comment.value)
    leading = getattr(statement, "leading_lines", ())
    if leading and leading[-1].comment is not None:
        comments.append(leading[-1].comment.value)
    return any(_FAILS_COMMENT.search(comment) for comment in comments)


def expects_failure(ctx: "Ctx") -> bool:
    """Whether code in ``ctx`` is expected to fail: inside ``pytest.raises`` /
    ``assertRaises``, or on a line whose comment says it fails (``says_it_fails``)."""
    link = ctx.conditions
    while link is not None:
        if link[0] == EXPECTS_FAILURE:
            return True
        link = link[1]
    return False


def failure_expected_or_handled(ctx: "Ctx") -> bool:
    """Whether a failure of code in ``ctx`` is expected (``expects_failure``) or caught on
    purpose (a small ``try`` whose ``except`` catches it)."""
    link = ctx.conditions
    while link is not None:
        if link[0] in (EXPECTS_FAILURE, HANDLES_FAILURE):
            return True
        link = link[1]
    return False


class DefaultOf:
    """A condition: the code is the default value of parameter ``name`` of ``func``. The
    default only runs when a call leaves that argument out."""

    __slots__ = ("name", "func")

    def __init__(self, name: str, func: "FunctionInfo") -> None:
        self.name = name
        self.func = func


class AfterExit:
    """A condition: the code follows a statement that leaves unless a test holds (``if T:
    return``, ``assert T``, an ``if``/``elif`` chain whose ``else`` exits). ``test`` is the
    test as written; ``requirement`` is what going on proves to hold, or None where it proves
    nothing definite (``if args.cuda and not available: raise`` lets a run without CUDA go on
    when it did not ask for CUDA)."""

    __slots__ = ("test", "requirement")

    def __init__(self, test: cst.CSTNode, requirement: Optional[cst.CSTNode]) -> None:
        self.test = test
        self.requirement = requirement


class OrElse:
    """A condition: the code is in the ``else`` (or an ``elif``) of an ``if`` or of a
    conditional expression, so it runs where ``test`` was false. A guard test guards both
    branches for TDL002 (the program chose its device there); a rule that needs the
    branch where CUDA is there (``Guards.runs_only_with_cuda``) tells them apart."""

    __slots__ = ("test",)

    def __init__(self, test: cst.CSTNode) -> None:
        self.test = test


class Ctx:
    """Where a node sits: its scope, the conditions around it, its function and class.

    ``conditions`` is a linked list ``(item, parent)`` of the tests guarding the node: ``if``
    tests, conditional-expression tests, decorators, early-exit tests, and the names of the
    enclosing functions and classes (strings). TDL002 asks whether any of them is a guard.
    Contexts are shared by every node in the same region, so recording one costs a pointer.
    """

    __slots__ = ("scope", "conditions", "func", "cls", "grad")

    def __init__(self, scope: "Scope", conditions, func: Optional["FunctionInfo"],
                 cls: Optional["ClassInfo"], grad: Optional[str] = None) -> None:
        self.scope = scope
        self.conditions = conditions
        self.func = func
        self.cls = cls
        # The innermost grad mode set around the node in its own function: GRAD_OFF
        # (``torch.no_grad()``, ``inference_mode()``, ``set_grad_enabled(False)``, as a
        # ``with`` or a decorator), GRAD_ON (``enable_grad()``, ``set_grad_enabled(True)``),
        # GRAD_RUNTIME (``set_grad_enabled(train)``: decided when it runs),
        # or None: nothing here sets it (the default at module level, the caller's in a
        # function).
        self.grad = grad

    def with_condition(self, item: Union[cst.CSTNode, str]) -> "Ctx":
        return Ctx(self.scope, (item, self.conditions), self.func, self.cls, self.grad)

    def with_grad(self, grad: str) -> "Ctx":
        return Ctx(self.scope, self.conditions, self.func, self.cls, grad)


def exclusive_branches(first: Ctx, second: Ctx) -> bool:
    """Whether code in ``first`` and code in ``second`` sit in the two branches of one ``if``
    (or conditional expression): the one in its body, the other in its ``else``. On any one
    pass only one of them runs, and where the test never changes (``if cuda:``) only one
    of them ever does."""
    def tests(conditions):
        taken, otherwise = set(), set()
        while conditions is not None:
            item = conditions[0]
            if isinstance(item, OrElse):
                otherwise.add(id(item.test))
            elif isinstance(item, cst.CSTNode):
                taken.add(id(item))
            conditions = conditions[1]
        return taken, otherwise

    taken_first, otherwise_first = tests(first.conditions)
    taken_second, otherwise_second = tests(second.conditions)
    return bool(taken_first & otherwise_second or taken_second & otherwise_first)


GRAD_OFF = "off"
GRAD_ON = "on"
GRAD_RUNTIME = "runtime"


def grad_mode_set_by(expr: cst.BaseExpression) -> Optional[str]:
    """GRAD_OFF / GRAD_ON when ``expr`` (a ``with`` item or a decorator) sets the grad mode:
    ``torch.no_grad()``, ``@torch.inference_mode()``, ``torch.set_grad_enabled(False)``,
    ``torch.enable_grad()``; GRAD_RUNTIME when it sets one this file cannot read
    (``torch.set_grad_enabled(is_train)``); else None. By the callee's last name, as torch
    code writes them."""
    call = expr if isinstance(expr, cst.Call) else None
    name = last_name(call.func if call is not None else expr)
    if name in api.GRAD_OFF_CALLS:
        if call is not None and call.args and isinstance(call.args[0].value, cst.Name) \
                and call.args[0].value.value == "False":  # inference_mode(False)
            return None
        return GRAD_OFF
    if name == "enable_grad":
        return GRAD_ON
    if name == "set_grad_enabled" and call is not None and call.args and \
            isinstance(call.args[0].value, cst.Name) and call.args[0].value.value in ("True", "False"):
        return GRAD_ON if call.args[0].value.value == "True" else GRAD_OFF
    if name == "set_grad_enabled":
        return GRAD_RUNTIME
    return None


class Binding:
    __slots__ = ("how", "value", "path", "ctx", "node", "order")

    def __init__(self, how: str, value, path: Path, ctx: Ctx, node: Optional[cst.CSTNode]) -> None:
        self.order = next_order()
        self.how = how
        self.value = value
        self.path = path
        self.ctx = ctx  # where the value expression is evaluated
        self.node = node  # the binding target (or statement), for reporting and fixes


class Scope:
    __slots__ = ("kind", "parent", "node", "bindings", "global_names", "nonlocal_names", "func")

    def __init__(self, kind: str, parent: Optional["Scope"], node: cst.CSTNode,
                 func: Optional["FunctionInfo"] = None) -> None:
        self.kind = kind  # "module" | "class" | "function" | "lambda" | "comprehension"
        self.parent = parent
        self.node = node
        self.bindings: Dict[str, List[Binding]] = {}
        self.global_names: set = set()
        self.nonlocal_names: set = set()
        self.func = func

    def module(self) -> "Scope":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def code_owner(self) -> "Scope":
        """The scope whose code this one's is part of: a comprehension's or a lambda's is
        the function (or module) around it, where the placement walks judge it."""
        scope = self
        while scope.kind in ("comprehension", "lambda") and scope.parent is not None:
            scope = scope.parent
        return scope

    def target_scope(self, name: str) -> "Scope":
        """The scope in which assigning ``name`` here creates the binding."""
        if name in self.global_names:
            return self.module()
        if name in self.nonlocal_names:
            scope = self.parent
            while scope is not None and (scope.kind == "class" or name not in scope.bindings):
                if scope.parent is None:
                    break
                scope = scope.parent
            return scope or self
        return self

    def add(self, name: str, binding: Binding) -> None:
        self.target_scope(name).bindings.setdefault(name, []).append(binding)

    def resolve(self, name: str) -> Optional["Scope"]:
        """The scope that owns ``name`` as seen from here (Python's LEGB rules), or None."""
        if name in self.global_names:
            module = self.module()
            return module if name in module.bindings else None
        scope: Optional[Scope] = self
        first = True
        while scope is not None:
            if (first or scope.kind != "class") and name in scope.bindings:
                return scope
            first = False
            scope = scope.parent
        return None

    def lookup(self, name: str) -> List[Binding]:
        owner = self.resolve(name)
        return owner.bindings[name] if owner is not None else []


class FunctionInfo:
    __slots__ = ("node", "name", "scope", "ctx", "cls", "returns", "return_points",
                 "opaque_return", "self_name", "param_names", "binds_class")

    def __init__(self, node, name: str, ctx: Ctx, cls: Optional["ClassInfo"]) -> None:
        self.node = node
        self.name = name
        self.ctx = ctx  # the context the def statement sits in
        self.cls = cls  # set when this is a method
        self.scope: Optional[Scope] = None
        self.returns: List[Tuple[Optional[cst.BaseExpression], Ctx]] = []
        # where each of ``returns`` sits in the flow (the same index): the assignments that
        # reach it are those that give what it returns (``reaching_bindings``)
        self.return_points: List["Point"] = []
        # True for generators, coroutines and decorated functions: a call does not return what
        # the body returns.
        self.opaque_return = False
        self.self_name: Optional[str] = None
        self.param_names: List[str] = []
        # a ``@classmethod``: its first parameter is the class (``model = cls(...)`` builds one)
        self.binds_class = False


class ClassInfo:
    __slots__ = ("node", "name", "ctx", "scope", "bases", "methods", "attributes")

    def __init__(self, node: cst.ClassDef, ctx: Ctx) -> None:
        self.node = node
        self.name = node.name.value
        self.ctx = ctx
        self.scope: Optional[Scope] = None
        self.bases = [arg.value for arg in node.bases if arg.keyword is None and not arg.star]
        self.methods: Dict[str, FunctionInfo] = {}
        # self.<name> = value assignments in any method: name -> bindings
        self.attributes: Dict[str, List[Binding]] = {}


class LoopSpan:
    """A ``for``/``while`` loop as a range of source order: a binding later in the same loop
    can reach code earlier in it on the next iteration."""

    __slots__ = ("start", "end")

    def __init__(self) -> None:
        self.start = next_order()
        self.end = self.start  # set when the walk leaves the loop


class Point:
    """A place in the flow of a function: its context, its source order and the outermost
    loop of its function around it (what ``reaching_bindings`` needs; a ``CallSite`` is one)."""

    __slots__ = ("ctx", "order", "loop")

    def __init__(self, ctx: Ctx, loop: Optional[LoopSpan] = None) -> None:
        self.order = next_order()
        self.ctx = ctx
        self.loop = loop


def reaching_bindings(name: str, point) -> List[Binding]:
    """The bindings of ``name`` that can reach ``point`` (a ``Point`` or ``CallSite``): in the
    function (or module) that owns the name and holds the point, the last assignment before
    it, and earlier ones while that one is conditional (an ``if`` the point is not under),
    plus later ones in a loop around the point (the next iteration) unless an assignment in
    the loop runs before it on every pass. Elsewhere, every binding. The one answer to
    "which assignment is read here" (TDL001's receivers, TDL003's saved values, what a
    helper returns: ``x = np.asarray(x); x = torch.from_numpy(x); return x``)."""
    scope = point.ctx.scope
    owner = scope.resolve(name)
    if owner is None:
        return []
    bindings = owner.bindings[name]
    if owner is not scope:
        return bindings
    earlier = [b for b in bindings if b.order < point.order]
    if not earlier:
        return bindings
    reaching = []
    point_chain = _chain_links(point.ctx.conditions)
    dominating = None
    for binding in reversed(earlier):
        chain = _chain_links(binding.ctx.conditions)
        if any(id(later.ctx.conditions) in chain for later in reaching):
            # a later assignment runs whenever this one does (``if x is not None: x =
            # np.asarray(x); x = torch.from_numpy(x)``): this one never reaches the point
            continue
        reaching.append(binding)
        if binding.ctx.conditions is None or id(binding.ctx.conditions) in point_chain:
            dominating = binding  # it runs whenever the point runs: nothing earlier
            break  # reaches past it
    loop = point.loop
    if loop is not None and (dominating is None or dominating.order < loop.start):
        # the next iteration: unless a binding in the loop runs before the point on every
        # pass (``x = f()`` then ``x.cuda()`` in one branch of an ``if``/``elif``, and
        # ``x = None`` in another: that one never reaches the point)
        reaching += [b for b in bindings if point.order < b.order < loop.end]
    return reaching


def _chain_links(conditions) -> set:
    """ids of every link of a condition chain (a context's tests, innermost first)."""
    links = set()
    while conditions is not None:
        links.add(id(conditions))
        conditions = conditions[1]
    return links


class CallSite:
    __slots__ = ("call", "ctx", "statement", "order", "loop")

    def __init__(self, call: cst.Call, ctx: Ctx, statement: Optional[cst.CSTNode],
                 loop: Optional[LoopSpan] = None) -> None:
        self.order = next_order()
        self.call = call
        self.ctx = ctx
        # The expression statement when the call is the whole statement (its value is discarded).
        self.statement = statement
        self.loop = loop  # the outermost loop of its function around the call, if any


def keyword_value(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    """The value of ``call``'s ``name=`` argument (``device=``), or None."""
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name),
                None)


def call_argument(call: cst.Call, index: int, keyword: str) -> Optional[cst.BaseExpression]:
    """What ``call`` passes as its ``index``-th positional argument or as ``keyword=``; None
    where it passes neither, or a starred argument comes first."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[:index + 1]) or len(positional) <= index:
        return None
    return positional[index].value


def checked_index_operands(call: cst.Call, name: str, function: bool):
    """``q.gather(1, actions)``, ``torch.index_select(x, 0, idx)``: for an operation that checks
    its index (or mask) against its input's device (``api.DEVICE_CHECKED_INDEX_ARGUMENTS``),
    named ``name``, a torch function (``function``: its input comes first) or a tensor method,
    the tensor it indexes, the index, and the word torch's error names the index by; None
    where ``name`` is no such operation or the call passes no tensor or no index."""
    checked = api.DEVICE_CHECKED_INDEX_ARGUMENTS.get(name)
    if checked is None:
        return None
    position, keyword, word = checked
    if function:
        tensor, index = call_argument(call, 0, "input"), call_argument(call, position + 1, keyword)
    elif isinstance(call.func, cst.Attribute):
        tensor, index = call.func.value, call_argument(call, position, keyword)
    else:
        return None
    if tensor is None or index is None:
        return None
    return tensor, index, word


def positional_items(call: cst.Call) -> list:
    """The positional arguments of ``call``, a list or tuple display among them spread into
    its elements (``torch.meshgrid(a, b)``, ``torch.cat([a, b])``): the tensors a joining or
    splitting torch function is given. A starred element stays a ``cst.StarredElement``, for
    the caller to judge."""
    items: list = []
    for arg in call.args:
        if arg.keyword is not None:
            continue
        if isinstance(arg.value, (cst.List, cst.Tuple)):
            items.extend(e if isinstance(e, cst.StarredElement) else e.value
                         for e in arg.value.elements)
        else:
            items.append(arg.value)
    return items


def last_name(expr: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` -> "c", ``f`` -> "f", anything else -> None."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None


def dotted_name(expr: cst.BaseExpression) -> Optional[str]:
    """``self.model.fc`` -> "self.model.fc"; None for anything that is not a plain chain."""
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    parts.append(expr.value)
    return ".".join(reversed(parts))


def root_name(expr: cst.BaseExpression) -> Optional[cst.Name]:
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr if isinstance(expr, cst.Name) else None


def with_item_expects_failure(item: cst.BaseExpression) -> bool:
    """A ``with`` item under which the body is expected to raise: ``pytest.raises(...)``,
    ``self.assertRaises(...)``, ``assertRaisesRegex(...)`` (called; the bare name is no
    context manager)."""
    if not isinstance(item, cst.Call):
        return False
    name = last_name(item.func) or ""
    return name.startswith("assertRaises") or name == "raises"


# Binary operators that combine two tensors elementwise (or by matmul).
ARITHMETIC_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide,
                        cst.MatrixMultiply, cst.Power, cst.BitAnd, cst.BitOr, cst.BitXor,
                        cst.LeftShift, cst.RightShift)
# ``t < p``, ``mask == 0``: comparisons that tensors make element by element, giving a bool
# tensor where their operands are (``is`` and ``in`` give a Python bool)
ELEMENTWISE_COMPARISONS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan,
                           cst.GreaterThanEqual, cst.Equal, cst.NotEqual)


def is_elementwise_comparison(node: cst.CSTNode) -> bool:
    """``a < b`` (``a < b <= c`` too): a comparison made of ``ELEMENTWISE_COMPARISONS``."""
    return type(node) is cst.Comparison and all(
        isinstance(c.operator, ELEMENTWISE_COMPARISONS) for c in node.comparisons)


def is_number(expr: cst.BaseExpression) -> bool:
    """A number literal, signed or not: ``1``, ``-0.5``."""
    if isinstance(expr, cst.UnaryOperation):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float))


def source_of(node: cst.CSTNode, limit: int = 40) -> str:
    """Short source text of an expression, as messages quote it."""
    text = " ".join(code_for_node(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def string_value(expr: cst.BaseExpression) -> Optional[str]:
    """The value of a plain string literal (no f-string), else None."""
    if isinstance(expr, cst.SimpleString):
        try:
            value = expr.evaluated_value
        except Exception:  # malformed escape sequences: not a literal we reason about
            return None
        return value if isinstance(value, str) else None
    if isinstance(expr, cst.ConcatenatedString):
        left, right = string_value(expr.left), string_value(expr.right)
        if left is None or right is None:
            return None
        return left + right
    return None


def may_bind(call: cst.Call, method: FunctionInfo) -> bool:
    """Whether ``call`` may be a call of ``method`` through an object (its ``self`` given by the
    receiver, where it has one): its arguments fit the parameters. ``*args``/``**kwargs`` on
    either side fit anything."""
    params = method.node.params
    if any(arg.star for arg in call.args) or isinstance(params.star_arg, cst.Param) or \
            params.star_kwarg is not None:
        return True
    positional = list(params.posonly_params) + list(params.params)
    if method.self_name is not None and positional:
        positional = positional[1:]
    given = sum(1 for arg in call.args if arg.keyword is None)
    if given > len(positional):
        return False
    named = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    known = {p.name.value for p in positional} | {p.name.value for p in params.kwonly_params}
    if not named <= known:
        return False
    return all(p.default is not None or i < given or p.name.value in named
               for i, p in enumerate(positional)) and \
        all(p.default is not None or p.name.value in named for p in params.kwonly_params)


def for_clauses(for_in):
    """A comprehension's ``for ... in ...`` clauses, outermost first (``comprehension.for_in``
    and its ``inner_for_in`` chain)."""
    while for_in is not None:
        yield for_in
        for_in = for_in.inner_for_in
