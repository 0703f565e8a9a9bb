"""Where a tensor lives, followed through code: the placement engine rules share.

Two parts:

- ``DeviceTrace``: the one recursion that tells whether an expression's value sits on a
  device. A name gives what is known of it, ``t.T``/``t[i]``/``-t``/``a + b`` keep the
  device of the tensor they come from, ``t.shape`` and other attributes that are no tensors
  drop it, and a call gives what its producer says. A rule (or provider) supplies what a
  name holds and what a call returns: TDL004 knows which batch values its loop moved, the
  ``modules`` provider knows what a module's method holds once the module was moved.
- ``OrderedWalk``: the statements of a block in the order they run, flow-sensitive: an
  assignment replaces what the name held before (``x = x.cpu()`` takes ``x`` off the
  device), the branches of an ``if`` and the bodies of loops and ``try`` are visited once, in
  source order. What a name holds at a point is ``placed`` when the walk reaches it: that
  is the one notion of "before" for code walked this way, the order in which the code runs
  on its first pass (a binding's ``order`` in ``Collected`` is the same order).

Evidence is whatever the supplier uses to name a device: a device expression (TDL004
proposes it in its fix) or ``True``. None means no evidence: the value may be anywhere.
"""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Tuple

import libcst as cst

from torchdevlint import torch_api as api
from torchdevlint.analysis.builder import holds, walk_code
from torchdevlint.analysis.model import dotted_name, is_elementwise_comparison


# Returned by an attribute supplier that has nothing to say: the generic rule decides.
UNDECIDED = object()


class DeviceTrace:
    """``device_of(expr)``: the evidence that ``expr``'s value is on a device, or None.

    A subclass supplies what a name holds (``name_device``), what a call returns
    (``call_device``, which may ask ``device_of`` about the call's operands) and, where it
    knows an object's state, what an attribute holds (``attribute_device``). (Subclassing,
    not callbacks: a trace that kept its owner's bound methods would tie the owner, and the
    syntax tree it holds, into a reference cycle that only the garbage collector frees.)"""

    def name_device(self, name: cst.Name):
        """What the name read at ``name`` holds (the node, so that a supplier may answer
        for this very read)."""
        return None

    def call_device(self, call: cst.Call):
        return None

    def attribute_device(self, attribute: cst.Attribute):
        """``self.weight``: state the subclass knows; UNDECIDED: the generic rule decides."""
        return UNDECIDED

    def device_of(self, expr):
        if isinstance(expr, cst.Name):
            return self.name_device(expr)
        if isinstance(expr, cst.Attribute):
            known = self.attribute_device(expr)
            if known is not UNDECIDED:
                return known
            if expr.attr.value in api.TENSOR_ATTRIBUTES:  # ``x.T``, ``x.data``; not ``x.shape``
                return self.device_of(expr.value)
            value = expr.value
            if expr.attr.value in api.NAMED_TUPLE_FIELDS and isinstance(value, cst.Call) and \
                    isinstance(value.func, cst.Attribute) and \
                    value.func.attr.value in api.NAMED_TUPLE_METHODS:
                return self.device_of(value.func.value)  # ``q.max(dim=1).values``
            if expr.attr.value in api.NAMED_TUPLE_FIELDS and isinstance(value, cst.Name):
                # ``best = scores.max(2)``, then ``best.indices``: a field of the named tuple
                # a name holds where the tuple is (BasicPBC's matches, devreports3)
                return self.device_of(value)
            return None
        if isinstance(expr, cst.Subscript):
            return self.device_of(expr.value)
        if isinstance(expr, cst.BinaryOperation):
            return self.device_of(expr.left) or self.device_of(expr.right)
        if isinstance(expr, cst.UnaryOperation):
            return self.device_of(expr.expression)
        if is_elementwise_comparison(expr):
            # ``t < p``, ``mask == 0``: a bool tensor where its tensor operands are (``is``
            # and ``in`` give a Python bool)
            return self.first_device([expr.left] + [c.comparator for c in expr.comparisons])
        if isinstance(expr, cst.Call):
            return self.call_device(expr)
        return None

    def first_device(self, exprs: Iterable[cst.BaseExpression]):
        """The evidence of the first of ``exprs`` that has some."""
        for expr in exprs:
            found = self.device_of(expr)
            if found:
                return found
        return None


class OrderedWalk(DeviceTrace):
    """Walks statements in the order they run and keeps ``placed``: for each local name, the
    evidence that its current value is on a device.

    Subclasses see every expression before the assignment it feeds (``expression``), every
    assignment (``assign``; the default records ``placed`` for plain names) and every call
    made as a statement (``call_statement``: a method that changes its receiver in place).
    ``device_of`` answers with the names as placed at the point the walk has reached; a
    subclass supplies ``call_device`` (and ``attribute_device``) as for any trace.
    Nested functions and classes are code that runs later: they are not entered.
    """

    def __init__(self) -> None:
        self.placed: Dict[str, object] = {}
        # What the branch of an ``if`` on a test that names a setting (``if args.use_cuda:``)
        # placed, by (the test's text, whether it held): a later ``if`` on the same test runs
        # the other branch where these did not happen (``_branch``).
        self._effects: Dict[Tuple[str, bool], Dict[str, Tuple[object, object]]] = {}
        # The outermost loop the walk is in (its node), if any: an assignment later in it
        # reaches code earlier in it on the next pass (``in_place_update``).
        self.loop: Optional[cst.CSTNode] = None

    def name_device(self, name: cst.Name):
        return self.placed.get(name.value)

    # -- what a subclass sees -----------------------------------------------------------

    def expression(self, expr: cst.BaseExpression) -> None:
        """Called for each expression statement, test, iterable and assigned value."""

    def assign(self, target: cst.BaseExpression, value: cst.BaseExpression, statement) -> None:
        """``target = value`` (also each target of ``a = b = value`` and annotated ones).
        ``a, b = x.to(d), y.to(d)`` places each name with its own value; any other unpacking
        takes what the names held away (``unpacked``)."""
        if isinstance(target, cst.Name):
            self.place(target.value, self.device_of(value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(elements) \
                    and not any(isinstance(e, cst.StarredElement) for e in value.elements):
                for inner, part in zip(elements, value.elements):
                    self.assign(inner, part.value, statement)
            else:
                self.unpacked(elements, value)

    def unpacked(self, targets, value: cst.BaseExpression) -> None:
        """``a, b = value`` of a value that is no tuple display: what each name holds, the
        walk does not know (a subclass that knows the kinds may tell)."""
        for target in targets:
            self.unbind(target)

    def call_statement(self, call: cst.Call) -> None:
        """A call whose result is not kept: it can only act on its receiver or arguments."""

    def in_place_update(self, statement: cst.AugAssign) -> None:
        """``target += value``: the value is an expression the walk sees; what the target
        holds stays (an in-place operation keeps its tensor where it is). A subclass that
        records reads may read the target too."""
        self.expression(statement.value)

    def loop_target(self, target, iterable: cst.BaseExpression) -> None:
        """``for target in iterable``: what the target holds, the walk does not know (a
        subclass that knows what a list holds may tell)."""
        self.unbind(target)

    def skips(self, statement: cst.SimpleStatementLine) -> bool:
        """Whether the walk leaves this line out (a subclass's choice: TDL004 leaves out a
        line whose comment says it errors, ``model.says_it_fails``)."""
        return False

    # -- what the walk offers -----------------------------------------------------------

    def unbind(self, target) -> None:
        """Names bound by a ``for`` target, a ``with ... as`` or an ``except ... as`` hold
        something the walk knows nothing about."""
        for node in walk_code(target):
            if isinstance(node, cst.Name):
                self.placed.pop(node.value, None)

    def place(self, name: str, evidence) -> None:
        if evidence:
            self.placed[name] = evidence
        else:
            self.placed.pop(name, None)

    def walk(self, statements) -> None:
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementLine):
                if self.skips(statement):
                    continue
                for small in statement.body:
                    self._small(small, statement)
            elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                continue
            elif isinstance(statement, cst.If):
                self._if(statement)
            elif isinstance(statement, (cst.For, cst.While)):
                self.expression(statement.iter if isinstance(statement, cst.For) else statement.test)
                if isinstance(statement, cst.For):
                    self.loop_target(statement.target, statement.iter)
                outer = self.loop
                self.loop = statement if outer is None else outer
                self._suite(statement.body)
                self.loop = outer
            elif isinstance(statement, cst.With):
                for item in statement.items:
                    self.expression(item.item)
                    if item.asname is not None:
                        self.unbind(item.asname.name)
                self._suite(statement.body)
            elif isinstance(statement, cst.Try):
                self._suite(statement.body)
                for handler in statement.handlers:
                    if handler.name is not None:
                        self.unbind(handler.name.name)
                    self._suite(handler.body)
                if statement.orelse is not None:
                    self._suite(statement.orelse.body)
                if statement.finalbody is not None:
                    self._suite(statement.finalbody.body)

    def _if(self, statement: cst.If) -> None:
        """The test, then each branch. Without ``else`` the body may run or not: what it
        places stays placed (a ``may`` walk). With ``else`` exactly one branch runs: each
        starts from what held before the ``if``, and after it a name holds what either
        branch left it (``if p is None: m = torch.rand(n) < p else: m = p == 1`` may hold
        the CPU tensor), the ``else`` branch's evidence first."""
        self.expression(statement.test)
        test = stable_test(statement.test)
        if statement.orelse is None:
            self._branch(statement.body, test, True)
            return
        before = dict(self.placed)
        self._branch(statement.body, test, True)
        taken = self.placed
        self.placed = dict(before)
        orelse = statement.orelse
        self._branch(orelse if isinstance(orelse, cst.If) else orelse.body, test, False)
        for name, evidence in taken.items():
            self.placed.setdefault(name, evidence)

    def _branch(self, suite, test: Optional[Tuple[str, bool]], holds: bool) -> None:
        """One branch of an ``if`` (``holds``: its test is true there). Where the test names a
        setting (``stable_test``), what the branch of an earlier ``if`` on it that ran when it
        was the other way placed did not happen here: dino's ``if args.use_cuda: features =
        features.cuda()``, then ``if args.use_cuda: ... else: features.index_copy_(0,
        index.cpu(), ...)`` (issue 28). Those names hold what they held before that branch
        while this one runs, and what it left them after it."""
        if test is None:
            if isinstance(suite, cst.If):
                self._if(suite)
            else:
                self._suite(suite)
            return
        text, polarity = test
        side = polarity == holds
        undone = {}
        for name, (earlier, placed) in self._effects.get((text, not side), {}).items():
            if self.placed.get(name) is placed:  # (not bound again since: ``_forget_tests_of``)
                self.place(name, earlier)
                undone[name] = (placed, self.placed.get(name))
        start = dict(self.placed)
        if isinstance(suite, cst.If):
            self._if(suite)
        else:
            self._suite(suite)
        effects = self._effects.setdefault((text, side), {})
        for name in set(start) | set(self.placed):
            if start.get(name) is not self.placed.get(name):
                effects[name] = (start.get(name), self.placed.get(name))
        for name, (placed, restored) in undone.items():
            if self.placed.get(name) is restored:
                self.place(name, placed)

    def _forget_tests_of(self, target) -> None:
        """An assignment outside the branches recorded: to a name a recorded test reads
        (``use_cuda = False``), that test may read otherwise now; to a name a branch placed,
        what the branch did is no longer what the name holds. (A branch's own assignments
        are recorded after it: ``_branch``.)"""
        if not self._effects:
            return
        for node in walk_code(target):
            if isinstance(node, cst.Name):
                root = node.value
                for key in [k for k in self._effects
                            if k[0] == root or k[0].startswith(root + ".")]:
                    del self._effects[key]
                for effects in self._effects.values():
                    effects.pop(root, None)

    def _suite(self, suite) -> None:
        if isinstance(suite, cst.SimpleStatementSuite):
            for small in suite.body:
                self._small(small, suite)
        else:
            self.walk(suite.body)

    def _small(self, small, statement) -> None:
        if isinstance(small, cst.Assign):
            self.expression(small.value)
            for target in small.targets:
                self._forget_tests_of(target.target)
                self.assign(target.target, small.value, statement)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self.expression(small.value)
            self._forget_tests_of(small.target)
            self.assign(small.target, small.value, statement)
        elif isinstance(small, cst.AugAssign):
            self._forget_tests_of(small.target)
            self.in_place_update(small)
        elif isinstance(small, cst.Expr):
            self.expression(small.value)
            if isinstance(small.value, cst.Call):
                self.call_statement(small.value)
        elif isinstance(small, cst.Return) and small.value is not None:
            self.expression(small.value)
        elif isinstance(small, cst.Assert):  # a test's check reads values as any line does
            self.expression(small.test)
            if small.msg is not None:
                self.expression(small.msg)
        elif isinstance(small, cst.Raise) and small.exc is not None:
            self.expression(small.exc)


def stable_test(test: cst.BaseExpression) -> Optional[Tuple[str, bool]]:
    """A test that names a setting, a name or a chain of attributes (``cuda``,
    ``args.use_cuda``, ``not self.on_gpu``): its text and whether it is read as is (False
    under ``not``); None for any other test (a call, a comparison: it may read otherwise the
    next time)."""
    polarity = True
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, polarity = test.expression, not polarity
    text = dotted_name(test)
    return None if text is None else (text, polarity)


def reached_without(root: cst.CSTNode, node: cst.CSTNode, others: Iterable[cst.CSTNode]) -> bool:
    """Whether ``node`` (in ``root``'s code: a function's body) can run on a pass through
    ``root`` on which none of ``others`` (nodes of the same code: assignments) has run before
    it, by the structure of the code alone: each other runs after ``node`` in the same block,
    or inside an ``if`` (without an ``else`` that also runs one), a loop or a ``with``/``try``
    of its own that comes before it in a block holding both, and can be skipped there
    (``if self.training: self.mean = m`` before ``x - self.mean``: the first call in eval
    mode meets what ``__init__`` stored). False where an other sits in a branch exclusive
    with ``node``'s (``if self.count == 0: self.mean = m`` / ``elif ...: ... self.mean ...``:
    an earlier pass may have taken the other branch), or in a statement that always runs
    first."""
    parents: Dict[int, cst.CSTNode] = {}
    stack = [root]
    while stack:
        parent = stack.pop()
        for child in parent.children:
            parents[id(child)] = parent
            stack.append(child)

    def chain(start):
        nodes = [start]
        while id(nodes[-1]) in parents:
            nodes.append(parents[id(nodes[-1])])
        return nodes

    theirs = chain(node)
    holding = {id(n): i for i, n in enumerate(theirs)}
    for other in others:
        mine = chain(other)
        if mine[-1] is not root or theirs[-1] is not root:
            return False
        index = next(i for i, n in enumerate(mine) if id(n) in holding)
        common = mine[index]
        if index == 0 or holding[id(common)] == 0:
            continue  # (``node`` in the other's value, or the other in ``node``: its own read)
        towards_other, towards_node = mine[index - 1], theirs[holding[id(common)] - 1]
        body = getattr(common, "body", None)  # (a block: an IndentedBlock's or the module's)
        positions = {id(s): i for i, s in enumerate(body)} \
            if isinstance(body, (list, tuple)) else {}
        if id(towards_other) not in positions or id(towards_node) not in positions:
            return False  # two branches of one statement, or parts of one expression
        if positions[id(towards_other)] > positions[id(towards_node)]:
            continue  # it runs after ``node``
        if not _skippable(towards_other, other):
            return False
    return True


def _skippable(statement: cst.CSTNode, inner: cst.CSTNode) -> bool:
    """Whether a pass through ``statement`` may leave out ``inner`` (a node inside it): a
    loop may run no time; an ``if`` without ``else`` may not be taken; in an ``if`` with
    one (or an ``elif``), and in a ``with`` or ``try`` body, the block holding ``inner``
    must itself be skippable."""
    if isinstance(statement, (cst.For, cst.While)):
        return not _holds(statement.iter if isinstance(statement, cst.For) else statement.test,
                          inner)
    if isinstance(statement, cst.If):
        if _holds(statement.test, inner):
            return False
        if statement.orelse is None:
            return True
        if _holds(statement.body, inner):
            return _skippable_block(statement.body, inner)
        if isinstance(statement.orelse, cst.If):
            return _skippable(statement.orelse, inner)
        return _skippable_block(statement.orelse.body, inner)
    if isinstance(statement, (cst.With, cst.Try)):
        return _holds(statement.body, inner) and _skippable_block(statement.body, inner)
    return False


def _skippable_block(block: cst.BaseSuite, inner: cst.CSTNode) -> bool:
    for statement in getattr(block, "body", ()):
        if _holds(statement, inner):
            return _skippable(statement, inner)
    return False


def _holds(node: cst.CSTNode, target: cst.CSTNode) -> bool:
    return holds(node, target, into_functions=True)
