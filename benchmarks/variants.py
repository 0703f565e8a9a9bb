"""Metamorphic recall: does a rule catch the bug, or only the way one fixture wrote it?

    python benchmarks/variants.py [--rules TDL002,TDL004] [--transforms rename,helper]
                                  [--json out.json]

Every positive fixture (fixtures/TDLxxx/positive/*.py) is rewritten by meaning-preserving
transforms, one at a time, each variant is linted in-process with the fixture's own rule (as
tests/test_fixtures.py lints fixtures), and the variant counts as *caught* when every expected
finding (the fixture's ``# expect:`` markers, read by benchmarks/fixture_markers.py) is still
reported, by the same rule, on a line that corresponds to the marked one. The negative
fixtures get the same transforms; a finding there that linting the original did not give is a
*new finding on a negative variant* (a variant of correct code must stay silent).

Transforms (each applied alone; a fixture where one does not apply, or whose result does not
parse, is skipped for it):

rename
    consistent renaming of the file's own identifiers (assigned names, functions and classes
    outside class bodies, parameters, loop and ``with`` targets) to neutral ones
    (``model`` -> ``alpha_0``). Never renamed: imported names, builtins, attributes,
    keyword-argument names (and any name used as one), class-body names, ``self``/``cls``,
    dunders.
into_main
    the module-level statements other than imports, defs, classes and the docstring move, in
    order, into ``def main():`` called under ``if __name__ == "__main__":``. Applies when a
    marked line is among them, no ``main`` exists, and no def or class reads a name they bind.
temporaries
    at a marked line, the outermost call that is an argument of another call, or the receiver
    of a chained call, is assigned to ``tmp_value`` on the line before and replaced by it. The
    temporary's line also corresponds to the marked one. Not done inside lambdas,
    comprehensions, conditional expressions or boolean operators (evaluation would change).
helper
    the marked statement's value (right-hand side, returned or evaluated expression) becomes
    ``return <value>`` of a new top-level ``def helper_value(<free names>)`` inserted before the
    top-level statement holding it, and is replaced by the call. The helper's body also
    corresponds to the marked line. Not done for values with ``super``, ``yield``, ``await``
    or ``:=``.
method
    as ``helper``, but the new function is a method ``method_value(self, <free names>)`` of
    the class, placed after the method holding the marked statement and called as
    ``self.method_value(...)`` (a factory in a helper method, as real modules write it).
    Applies where the statement is in an instance method (a first parameter, no
    ``staticmethod``/``classmethod``), not in a function nested in it.
attr_holder
    a marked ``target.attr = <value>`` (one attribute target, a value that is not a plain
    name) becomes ``holder_value = <value>`` on the line before and ``target.attr =
    holder_value``: state built in a local, then stored. Both lines correspond. Not done in a
    class body (the local would become a class attribute).
alias
    the first of the file's own local names (a parameter, an assigned name; not ``self``,
    imports, top-level defs or classes) that the marked statement's value reads is bound to
    a second name on the line before, ``alias_value = model``, and the value reads it through
    that name (``alias_value(x)``). Both lines correspond. The name must be read whenever the
    value is evaluated (not only in a branch of ``a if c else b`` or ``and``/``or``, a lambda
    or a comprehension), so binding it earlier cannot fail where the original would not. Not
    done in a class body, or where the value binds that name itself.
tuple
    the marked ``a = x`` and the simple assignment next to it in the same block (the one
    after it, else the one before it; one target each, a plain name or ``name.attr``) become
    one line ``a, b = x, y`` (``x, y = x.to(d), y.to(d)``). Values are still evaluated in
    order, before any binding, so it applies only where the second value cannot see the
    first assignment: it does not read the first target's name (for ``name.attr``: neither
    ``name`` nor ``attr``, and it calls only builtins and imported names), no def or lambda
    of the scope reads that name and no ``global``/``nonlocal`` names it; and not when the
    second line has comments above it, or a value is a bare tuple, ``yield`` or ``:=``.
import_as
    the file's top-level ``import torch`` becomes ``import torch as th`` and every read of
    ``torch`` reads ``th``. Applies where that line alone binds ``torch`` (no ``import
    torch.nn`` without ``as``, no parameter or assignment named ``torch``) and ``th`` is free.
from_import
    beside the file's ``import torch``, ``from torch import A, B`` for every ``torch.A``
    whose last name is used nowhere else in the file (and is no builtin or keyword), and
    each such ``torch.A`` becomes ``A`` (``torch.zeros(3)`` -> ``zeros(3)``; a
    ``torch.device`` in a file with a ``device`` variable stays). Same condition on ``torch``
    as ``import_as``.
subclass
    each top-level class holding a marked line (for a negative fixture: every top-level
    class with bases) becomes ``class NameBase(<its bases>): <its body>`` followed by
    ``class Name(NameBase): pass``, so the behaviour is inherited from a base class of the
    same file. Not done for decorated classes, class keywords (``metaclass=``), ``super``
    with arguments, ``__class__``, ``__slots__``, ``__name__``/``__qualname__`` or private
    (mangled) names in the body, or where ``NameBase`` is taken.

It is a benchmark, not a gate: it exits 0 whatever the recall, 1 only when something crashed.
"""
from __future__ import annotations

import argparse
import ast
import builtins
import functools
import json
import keyword
import re
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional, Set, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.fixture_markers import FIXTURES, expected_in_text  # noqa: E402
from torchdevlint.engine import lint_source  # noqa: E402
from torchdevlint.rules import RULES_BY_CODE  # noqa: E402

TAG = "vmark"
TAG_RE = re.compile(TAG + r"(\d+)")
TEMP = "tmp_value"
HELPER = "helper_value"
METHOD = "method_value"
HOLDER = "holder_value"
ALIAS = "alias_value"
TORCH_ALIAS = "th"
BASE_SUFFIX = "Base"
WORDS = ("alpha", "bravo", "delta", "kilo", "lima", "oscar", "tango", "zulu")
BUILTINS = frozenset(dir(builtins))


class NotApplicable(Exception):
    """The transform does not apply to this file (or this marked line)."""


# A variant: its source and, per original marked line, the lines of the variant that
# correspond to it.
Variant = Tuple[str, Dict[int, Set[int]]]


def tag_markers(source: str, lines: Set[int]) -> str:
    """Appends ``vmarkN`` to each marked line N's comment so its place can be found after a
    transform moved it (comments travel with their statements in LibCST)."""
    out = source.splitlines(keepends=True)
    for number in lines:
        text = out[number - 1]
        body = text.rstrip("\r\n")
        out[number - 1] = f"{body} {TAG}{number}{text[len(body):]}"
    return "".join(out)


def tagged_lines(source: str) -> Dict[int, Set[int]]:
    found: Dict[int, Set[int]] = {}
    for number, text in enumerate(source.splitlines(), start=1):
        for match in TAG_RE.finditer(text):
            found.setdefault(int(match.group(1)), set()).add(number)
    return found


class _PlainNames(cst.CSTVisitor):
    """Collects the plain names of what it visits (not attribute or keyword names)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: Set[str] = set()

    def visit_Attribute(self, node):
        node.value.visit(self)
        return False

    def visit_Arg(self, node):
        node.value.visit(self)
        return False

    def visit_Name(self, node):
        self.names.add(node.value)


def _names_in(node: cst.CSTNode) -> Set[str]:
    """Every plain name read or bound in ``node`` (not attributes, not keyword names)."""
    visitor = _PlainNames()
    node.visit(visitor)
    return visitor.names


# ---------------------------------------------------------------- rename

def _found_by_name(node: cst.FunctionDef) -> bool:
    """A test (``test*``) or a pytest fixture: the framework finds it, and what its
    parameters receive, by name."""
    return node.name.value.startswith("test") or any(
        (cst.helpers.get_full_name_for_node(
            d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or ""
         ).rpartition(".")[2] == "fixture" for d in node.decorators)


def _all_params(params: cst.Parameters):
    star = [params.star_arg] if isinstance(params.star_arg, cst.Param) else []
    kwargs = [params.star_kwarg] if params.star_kwarg is not None else []
    return [*params.posonly_params, *params.params, *star, *params.kwonly_params, *kwargs]


class _Bindings(cst.CSTVisitor):
    def __init__(self):
        self.bound: Set[str] = set()
        self.excluded: Set[str] = {"self", "cls"}
        self.class_depth = 0

    def _targets(self, node):
        for name in _names_in(node):
            self.bound.add(name)

    def visit_Import(self, node):
        for alias in node.names:
            self.excluded.add((alias.asname.name.value if alias.asname
                               else cst.helpers.get_full_name_for_node(alias.name).split(".")[0]))
        return False

    def visit_ImportFrom(self, node):
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                self.excluded.add(alias.asname.name.value if alias.asname else alias.name.value)
        return False

    def visit_ClassDef(self, node):
        (self.excluded if self.class_depth or node.name.value.startswith("Test")
         else self.bound).add(node.name.value)
        for statement in node.body.body:  # class-body names are attributes
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    for target in getattr(small, "targets", ()):
                        self.excluded |= _names_in(target.target)
                    if isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                        self.excluded |= _names_in(small.target)
            elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                self.excluded.add(statement.name.value)
        self.class_depth += 1

    def leave_ClassDef(self, node):
        self.class_depth -= 1

    def visit_FunctionDef(self, node):
        if _found_by_name(node):
            # pytest collects tests by name and hands fixtures to parameters by name:
            # renaming them changes what runs
            self.excluded.add(node.name.value)
            self.excluded |= {param.name.value for param in _all_params(node.params)}
            return
        self.bound.add(node.name.value)

    def visit_Param(self, node):
        if node.name.value not in self.excluded:
            self.bound.add(node.name.value)

    def visit_Arg(self, node):
        if node.keyword is not None:
            self.excluded.add(node.keyword.value)

    def visit_AssignTarget(self, node):
        self._targets(node.target)

    def visit_AnnAssign(self, node):
        self._targets(node.target)

    def visit_AugAssign(self, node):
        self._targets(node.target)

    def visit_For(self, node):
        self._targets(node.target)

    def visit_CompFor(self, node):
        self._targets(node.target)

    def visit_AsName(self, node):
        self._targets(node.name)

    def visit_NamedExpr(self, node):
        self._targets(node.target)


def rename(source: str, marked: Set[int]) -> Variant:
    module = cst.parse_module(source)
    bindings = _Bindings()
    module.visit(bindings)
    old = sorted(n for n in bindings.bound - bindings.excluded
                 if n not in BUILTINS and not (n.startswith("__") and n.endswith("__")))
    taken = _names_in(module)
    mapping = {}
    for index, name in enumerate(old):
        new = f"{WORDS[index % len(WORDS)]}_{index}"
        while new in taken:
            new += "_"
        mapping[name] = new
    if not mapping:
        raise NotApplicable("no own names")

    class Renamer(cst.CSTTransformer):
        def visit_Attribute(self, node):
            return True

        def leave_Attribute(self, original, updated):
            return updated.with_changes(attr=original.attr)

        def leave_Arg(self, original, updated):
            return updated.with_changes(keyword=original.keyword)

        def leave_ImportAlias(self, original, updated):
            return original

        def leave_Name(self, original, updated):
            return updated.with_changes(value=mapping.get(original.value, original.value))

    code = module.visit(Renamer()).code
    return code, tagged_lines(code)


# ---------------------------------------------------------------- into_main

def _is_main_guard(statement) -> bool:
    return (isinstance(statement, cst.If) and "__name__" in _names_in(statement.test)
            and "__main__" in cst.Module([]).code_for_node(statement.test))


def into_main(source: str, marked: Set[int]) -> Variant:
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module)
    positions = wrapper.resolve(PositionProvider)
    module = wrapper.module
    kept, moved = [], []
    for index, statement in enumerate(module.body):
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            kept.append(statement)
            continue
        if isinstance(statement, cst.SimpleStatementLine):
            smalls = statement.body
            if all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in smalls):
                kept.append(statement)
                continue
            if index == 0 and len(smalls) == 1 and isinstance(smalls[0], cst.Expr) \
                    and isinstance(smalls[0].value, (cst.SimpleString, cst.ConcatenatedString)):
                kept.append(statement)
                continue
            if any(isinstance(s, (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal))
                   for s in smalls):
                raise NotApplicable("imports mixed with statements")
        moved.append(statement)
    if not moved:
        raise NotApplicable("nothing at module level")
    if marked and not any(positions[s].start.line <= line <= positions[s].end.line
                          for s in moved for line in marked):
        raise NotApplicable("no marked line at module level")
    defined = {s.name.value for s in kept if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    if "main" in defined or "main" in _names_in(module):
        raise NotApplicable("main exists")
    bound = _Bindings()
    for statement in moved:
        statement.visit(bound)
    read_by_defs = set()
    for statement in kept:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            read_by_defs |= _names_in(statement)
    if bound.bound & read_by_defs:
        raise NotApplicable("a def reads a moved name")
    body = []
    for statement in moved:  # the guard's body goes in place, the guard itself away
        body.extend(statement.body.body if _is_main_guard(statement) and not statement.orelse
                    else [statement])
    main = cst.FunctionDef(
        name=cst.Name("main"), params=cst.Parameters(), body=cst.IndentedBlock(body=body),
        leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    guard = cst.parse_statement('if __name__ == "__main__":\n    main()\n')
    guard = guard.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    code = module.with_changes(body=[*kept, main, guard]).code
    return code, tagged_lines(code)


# ---------------------------------------------------------------- temporaries and helper

@functools.lru_cache(maxsize=4)
def _prepared(source: str):
    """The module of ``source`` with its positions, parents and names, made once for all the
    lines a line transform visits in one file (the trees are immutable, so sharing is safe)."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    metadata = wrapper.resolve_many([PositionProvider, ParentNodeProvider])
    return (wrapper.module, metadata[PositionProvider], metadata[ParentNodeProvider],
            frozenset(_names_in(wrapper.module)))


def _names_of(source: str) -> frozenset:
    return _prepared(source)[3]


@functools.lru_cache(maxsize=4)
def _own_names(source: str) -> frozenset:
    """The names the file binds itself, below its top (locals, parameters, loop targets)."""
    module = _prepared(source)[0]
    bindings = _Bindings()
    module.visit(bindings)
    return frozenset(bindings.bound - bindings.excluded - _top_names(module) - BUILTINS)


def _statement_at(source: str, line: int):
    """The module of ``source`` and the simple statement line holding ``line``, with
    metadata; NotApplicable if none."""
    module, positions, parents, _ = _prepared(source)
    best = None
    for node, position in positions.items():
        if isinstance(node, cst.SimpleStatementLine) and position.start.line <= line <= position.end.line:
            best = node
    if best is None or len(best.body) != 1 or not isinstance(
            parents[best], (cst.IndentedBlock, cst.Module)):
        raise NotApplicable("marked line is not one simple statement in a block")
    return module, best, positions, parents


def _rewrite(module: cst.Module, statement, new_statement, before: list, top_level: bool,
             parents) -> cst.Module:
    """``statement`` replaced by ``new_statement``, with ``before`` inserted ahead of it in its
    block (or, with ``top_level``, ahead of the module-level statement holding it)."""
    if not top_level:
        block = parents[statement]
        body = []
        for node in block.body:
            body.extend([*before, new_statement] if node is statement else [node])
        new_block = block.with_changes(body=body)
        return new_block if block is module else cst.ensure_type(
            module.deep_replace(block, new_block), cst.Module)
    top = statement
    while not isinstance(parents[top], cst.Module):
        top = parents[top]
    new_top = new_statement if top is statement else top.deep_replace(statement, new_statement)
    body = []
    for node in module.body:
        body.extend([*before, new_top] if node is top else [node])
    return module.with_changes(body=body)


def _lines_of(code: str, predicate) -> Set[int]:
    for node in ast.walk(ast.parse(code)):
        if predicate(node):
            return set(range(node.lineno, node.end_lineno + 1))
    raise AssertionError("inserted code not found")


def _merge(code: str, extra: Set[int], positions, statement) -> Dict[int, Set[int]]:
    """The tagged lines of ``code``, where every line of the original ``statement`` (a
    statement of several lines may hold several markers) also corresponds to ``extra``."""
    lines = tagged_lines(code)
    span = positions[statement]
    for line in range(span.start.line, span.end.line + 1):
        lines[line] = lines.get(line, set()) | extra
    return lines


def temporaries(source: str, line: int) -> Variant:
    if TEMP in _names_of(source):
        raise NotApplicable("name taken")
    module, statement, positions, parents = _statement_at(source, line)
    candidate = None
    unsafe = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
              cst.IfExp, cst.BooleanOperation)

    def inside_unsafe(node) -> bool:
        while node is not statement:
            node = parents[node]
            if isinstance(node, unsafe):
                return True
        return False

    def visit(node):
        nonlocal candidate
        if candidate is not None:
            return
        if isinstance(node, cst.Call):
            parent = parents.get(node)
            nested = (isinstance(parent, cst.Arg) and isinstance(parents[parent], cst.Call)) or (
                isinstance(parent, cst.Attribute) and parent.value is node
                and isinstance(parents[parent], cst.Call) and parents[parent].func is parent)
            pos = positions[node]
            if nested and pos.start.line <= line <= pos.end.line and not inside_unsafe(node):
                candidate = node
                return
        for child in node.children:
            visit(child)

    visit(statement.body[0])
    if candidate is None:
        raise NotApplicable("no nested or chained call on the marked line")
    assign = cst.SimpleStatementLine(body=[cst.Assign(
        targets=[cst.AssignTarget(cst.Name(TEMP))], value=candidate)])
    module = _rewrite(module, statement, statement.deep_replace(candidate, cst.Name(TEMP)),
                      [assign], False, parents)
    code = module.code
    extra = _lines_of(code, lambda n: isinstance(n, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == TEMP for t in n.targets))
    return code, _merge(code, extra, positions, statement)


class _Free(cst.CSTVisitor):
    """Names an expression reads and does not bind itself (lambda params, comprehension
    targets)."""

    def __init__(self):
        self.read: List[str] = []
        self.bound: Set[str] = set()
        self.forbidden = False

    def visit_Attribute(self, node):
        node.value.visit(self)
        return False

    def visit_Arg(self, node):
        node.value.visit(self)
        return False

    def visit_Param(self, node):
        self.bound.add(node.name.value)
        return False

    def visit_CompFor(self, node):
        self.bound |= _names_in(node.target)

    def visit_NamedExpr(self, node):
        self.forbidden = True

    def visit_Yield(self, node):
        self.forbidden = True

    def visit_Await(self, node):
        self.forbidden = True

    def visit_Name(self, node):
        if node.value == "super":
            self.forbidden = True
        if node.value not in self.read:
            self.read.append(node.value)


def _top_names(module: cst.Module) -> Set[str]:
    """What the module binds at its top: defs, classes and imported names."""
    top = set()
    for node in module.body:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            top.add(node.name.value)
        elif isinstance(node, cst.SimpleStatementLine):
            for s in node.body:
                if isinstance(s, (cst.Import, cst.ImportFrom)):
                    bindings = _Bindings()
                    s.visit(bindings)
                    top |= bindings.excluded - {"self", "cls"}
    return top


def _extraction(module: cst.Module, statement, parents, skip: Set[str] = frozenset()):
    """The marked statement's small statement, its value and the value's free names that a
    new function must take as parameters (not the module's own top names, builtins or
    ``skip``); NotApplicable where the value cannot leave its function."""
    small = statement.body[0]
    value = getattr(small, "value", None)
    if not isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Expr)) \
            or value is None:
        raise NotApplicable("no value to extract")
    free = _Free()
    value.visit(free)
    if free.forbidden:
        raise NotApplicable("value cannot leave its function")
    top = _top_names(module)
    # a name the enclosing functions bind (a parameter, a local) is theirs, not the module's
    # ``def test(weights_path)`` reads its parameter, not the fixture function of that name
    node = statement
    while node in parents:
        node = parents[node]
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            local = _Bindings()
            node.params.visit(local)
            if isinstance(node, cst.FunctionDef):
                node.body.visit(local)
            top -= local.bound | {param.name.value for param in _all_params(node.params)}
    params = [n for n in free.read if n not in free.bound and n not in top
              and n not in BUILTINS and n not in skip]
    return small, value, params


def helper(source: str, line: int) -> Variant:
    if HELPER in _names_of(source):
        raise NotApplicable("name taken")
    module, statement, positions, parents = _statement_at(source, line)
    small, value, params = _extraction(module, statement, parents)
    function = cst.FunctionDef(
        name=cst.Name(HELPER),
        params=cst.Parameters(params=[cst.Param(cst.Name(n)) for n in params]),
        body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Return(value=value)])]),
        leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    call = cst.Call(func=cst.Name(HELPER), args=[
        cst.Arg(cst.Name(n), comma=cst.MaybeSentinel.DEFAULT) for n in params])
    new_statement = statement.with_changes(body=[small.with_changes(value=call)])
    module = _rewrite(module, statement, new_statement, [function], True, parents)
    code = module.code
    extra = _lines_of(code, lambda n: isinstance(n, ast.FunctionDef) and n.name == HELPER)
    return code, _merge(code, extra, positions, statement)


# ---------------------------------------------------------------- method, attr_holder, alias

def _enclosing(node, parents, kinds):
    while node in parents:
        node = parents[node]
        if isinstance(node, kinds):
            return node
    return None


def _method_of(statement, parents):
    """(the method holding ``statement``, its class, its first parameter's name) where the
    statement is in a plain method (first parameter, no staticmethod/classmethod) of a class;
    NotApplicable otherwise. A statement of a function nested in the method does not count."""
    function = _enclosing(statement, parents, (cst.FunctionDef, cst.Lambda))
    if not isinstance(function, cst.FunctionDef):
        raise NotApplicable("not in a function")
    block = parents[function]
    klass = parents.get(block)
    if not isinstance(klass, cst.ClassDef) or not function.params.params:
        raise NotApplicable("not in a method")
    for decorator in function.decorators:
        name = cst.helpers.get_full_name_for_node(decorator.decorator) or ""
        if name.split(".")[-1] in ("staticmethod", "classmethod"):
            raise NotApplicable("not an instance method")
    return function, klass, function.params.params[0].name.value


def method(source: str, line: int) -> Variant:
    if METHOD in _names_of(source) or re.search(r"\b" + METHOD + r"\b", source):
        raise NotApplicable("name taken")
    module, statement, positions, parents = _statement_at(source, line)
    function, klass, receiver = _method_of(statement, parents)
    small, value, params = _extraction(module, statement, parents, skip={receiver})
    new_method = cst.FunctionDef(
        name=cst.Name(METHOD),
        params=cst.Parameters(params=[cst.Param(cst.Name(n)) for n in [receiver, *params]]),
        body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Return(value=value)])]),
        leading_lines=[cst.EmptyLine(indent=False)])
    call = cst.Call(func=cst.Attribute(cst.Name(receiver), cst.Name(METHOD)), args=[
        cst.Arg(cst.Name(n), comma=cst.MaybeSentinel.DEFAULT) for n in params])
    new_function = function.deep_replace(
        statement, statement.with_changes(body=[small.with_changes(value=call)]))
    body = []
    for node in klass.body.body:
        body.extend([new_function, new_method] if node is function else [node])
    new_class = klass.with_changes(body=klass.body.with_changes(body=body))
    code = cst.ensure_type(module.deep_replace(klass, new_class), cst.Module).code
    extra = _lines_of(code, lambda n: isinstance(n, ast.FunctionDef) and n.name == METHOD)
    return code, _merge(code, extra, positions, statement)


def _not_in_class_body(statement, parents) -> None:
    if isinstance(parents.get(parents[statement]), cst.ClassDef):
        raise NotApplicable("a new name in a class body would be a class attribute")


def attr_holder(source: str, line: int) -> Variant:
    if HOLDER in _names_of(source):
        raise NotApplicable("name taken")
    module, statement, positions, parents = _statement_at(source, line)
    small = statement.body[0]
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Attribute)) \
            or isinstance(small.value, cst.Name):
        raise NotApplicable("not one attribute assigned a value")
    _not_in_class_body(statement, parents)
    if isinstance(small.value, cst.Tuple) and not small.value.lpar:
        value = small.value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    else:
        value = small.value
    holder = cst.SimpleStatementLine(body=[cst.Assign(
        targets=[cst.AssignTarget(cst.Name(HOLDER))], value=value)])
    module = _rewrite(module, statement, statement.with_changes(
        body=[small.with_changes(value=cst.Name(HOLDER))]), [holder], False, parents)
    code = module.code
    extra = _lines_of(code, lambda n: isinstance(n, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == HOLDER for t in n.targets))
    return code, _merge(code, extra, positions, statement)


class _ReplaceName(cst.CSTTransformer):
    """Every read of the name ``old`` becomes ``new`` (attributes and keywords untouched)."""

    def __init__(self, old: str, new: str):
        super().__init__()
        self.old, self.new = old, new

    def visit_Attribute(self, node):
        return False  # only the receiver is a read: leave_Attribute renames in it

    def leave_Attribute(self, original, updated):
        return updated.with_changes(value=original.value.visit(self))

    def visit_Import(self, node):
        return False

    def visit_ImportFrom(self, node):
        return False

    def visit_Arg(self, node):
        return True

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)

    def leave_Name(self, original, updated):
        return updated.with_changes(value=self.new) if original.value == self.old else updated


def _read_unconditionally(value) -> Set[str]:
    """The names ``value`` reads whenever it is evaluated (not only in one branch of a
    conditional expression or ``and``/``or``, a lambda or a comprehension)."""

    class Visitor(_PlainNames):
        def visit_IfExp(self, node):
            node.test.visit(self)
            return False

        def visit_BooleanOperation(self, node):
            node.left.visit(self)
            return False

        def visit_Lambda(self, node):
            return False

        def visit_ListComp(self, node):
            return False

        def visit_SetComp(self, node):
            return False

        def visit_DictComp(self, node):
            return False

        def visit_GeneratorExp(self, node):
            return False

    visitor = Visitor()
    value.visit(visitor)
    return visitor.names


def alias(source: str, line: int) -> Variant:
    if ALIAS in _names_of(source):
        raise NotApplicable("name taken")
    module, statement, positions, parents = _statement_at(source, line)
    _not_in_class_body(statement, parents)
    small = statement.body[0]
    value = getattr(small, "value", None)
    if not isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Expr)) \
            or value is None:
        raise NotApplicable("no value that reads a name")
    free = _Free()
    value.visit(free)
    own = _own_names(source)
    always = _read_unconditionally(value)
    names = [n for n in free.read if n in own and n in always and n not in free.bound]
    if not names or free.forbidden:
        raise NotApplicable("no own name read")
    name = names[0]
    bind = cst.SimpleStatementLine(body=[cst.Assign(
        targets=[cst.AssignTarget(cst.Name(ALIAS))], value=cst.Name(name))])
    new_value = value.visit(_ReplaceName(name, ALIAS))
    module = _rewrite(module, statement, statement.with_changes(
        body=[small.with_changes(value=new_value)]), [bind], False, parents)
    code = module.code
    extra = _lines_of(code, lambda n: isinstance(n, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == ALIAS for t in n.targets))
    return code, _merge(code, extra, positions, statement)


# ---------------------------------------------------------------- tuple

def _single_assign(node):
    """The ``Assign`` of a line ``target = value`` with one plain-name or ``name.attr``
    target and a value that can stand as a tuple element; else None."""
    if not (isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1):
        return None
    small = node.body[0]
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return None
    target = small.targets[0].target
    if not (isinstance(target, cst.Name) or (
            isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name))):
        return None
    value = small.value
    if isinstance(value, (cst.Yield, cst.NamedExpr, cst.StarredElement)) or (
            isinstance(value, cst.Tuple) and not value.lpar):
        return None
    return small


def _reads_in_nested_scopes(scope, name: str) -> bool:
    """Whether a def or lambda inside ``scope`` (or a ``global``/``nonlocal``) names ``name``."""
    found = False

    class Visitor(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            nonlocal found
            if node is not scope and name in _names_in(node):
                found = True
            return node is scope

        def visit_Lambda(self, node):
            nonlocal found
            found = found or name in _names_in(node)
            return False

        def visit_Global(self, node):
            nonlocal found
            found = found or any(n.name.value == name for n in node.names)

        def visit_Nonlocal(self, node):
            nonlocal found
            found = found or any(n.name.value == name for n in node.names)

    scope.visit(Visitor())
    return found


def _calls_only_imported(value, imported: Set[str]) -> bool:
    """Every call in ``value`` is of a builtin or of a dotted name rooted at an import (such
    a call cannot read the program's own attributes)."""
    ok = True

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, node):
            nonlocal ok
            name = cst.helpers.get_full_name_for_node(node.func) or ""
            root = name.split(".")[0]
            if not (root in imported or (name in BUILTINS and "." not in name)):
                ok = False

    value.visit(Visitor())
    return ok


def tuple_(source: str, line: int) -> Variant:
    module, statement, positions, parents = _statement_at(source, line)
    if _single_assign(statement) is None:
        raise NotApplicable("not one simple assignment")
    block = parents[statement]
    index = next(i for i, node in enumerate(block.body) if node is statement)
    scope = _enclosing(statement, parents, (cst.FunctionDef,)) or module
    imported = _top_names(module)
    pairs = []
    if index + 1 < len(block.body):
        pairs.append((statement, block.body[index + 1]))
    if index > 0:
        pairs.append((block.body[index - 1], statement))
    for first, second in pairs:
        one, two = _single_assign(first), _single_assign(second)
        if one is None or two is None or second.leading_lines:
            continue
        target = one.targets[0].target
        head = target if isinstance(target, cst.Name) else target.value
        code_of = cst.Module([]).code_for_node
        if code_of(target) == code_of(two.targets[0].target):
            continue
        if isinstance(target, cst.Name):
            # the second value must not see the first's new value: it must not read the
            # name, nor may anything it calls (a closure or a global)
            if target.value in _names_in(two.value) or _reads_in_nested_scopes(scope, target.value):
                continue
        elif head.value in _names_in(two.value) or target.attr.value in code_of(two.value) \
                or not _calls_only_imported(two.value, imported):
            continue
        break
    else:
        raise NotApplicable("no adjacent simple assignment to merge")

    def element(node):
        return cst.Element(node, comma=cst.MaybeSentinel.DEFAULT)

    comments = [c.value for c in (first.trailing_whitespace.comment,
                                  second.trailing_whitespace.comment) if c is not None]
    merged = first.with_changes(
        body=[cst.Assign(
            targets=[cst.AssignTarget(cst.Tuple(
                [element(one.targets[0].target), element(two.targets[0].target)],
                lpar=[], rpar=[]))],
            value=cst.Tuple([element(one.value), element(two.value)], lpar=[], rpar=[]))],
        trailing_whitespace=cst.TrailingWhitespace(
            whitespace=cst.SimpleWhitespace("  " if comments else ""),
            comment=cst.Comment("  ".join(comments)) if comments else None))
    body = []
    for node in block.body:
        if node is first:
            body.append(merged)
        elif node is not second:
            body.append(node)
    new_block = block.with_changes(body=body)
    module = new_block if block is module else cst.ensure_type(
        module.deep_replace(block, new_block), cst.Module)
    code = module.code
    return code, tagged_lines(code)


# ---------------------------------------------------------------- import_as, from_import

def _import_torch(module: cst.Module):
    """The module's top-level ``import torch`` line, where ``torch`` is bound by it alone."""
    found = None
    for node in module.body:
        if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 \
                and isinstance(node.body[0], cst.Import) and len(node.body[0].names) == 1:
            alias_ = node.body[0].names[0]
            if alias_.asname is None and isinstance(alias_.name, cst.Name) \
                    and alias_.name.value == "torch":
                found = found or node
    if found is None:
        raise NotApplicable("no `import torch`")
    others = 0

    class Binds(cst.CSTVisitor):
        def visit_ImportAlias(self, node):
            nonlocal others
            bound = node.asname.name if node.asname else node.name
            while isinstance(bound, cst.Attribute):
                bound = bound.value
            others += isinstance(bound, cst.Name) and bound.value == "torch"

        def visit_Param(self, node):
            nonlocal others
            others += node.name.value == "torch"

    module.visit(Binds())
    bindings = _Bindings()
    module.visit(bindings)
    if others > 1 or "torch" in bindings.bound:
        raise NotApplicable("`torch` is bound elsewhere too")
    return found


def import_as(source: str, marked: Set[int]) -> Variant:
    module = cst.parse_module(source)
    line = _import_torch(module)
    if TORCH_ALIAS in _names_in(module):
        raise NotApplicable("name taken")
    new_line = line.with_changes(body=[cst.Import(names=[cst.ImportAlias(
        cst.Name("torch"), asname=cst.AsName(cst.Name(TORCH_ALIAS)))])])
    body = [new_line if node is line else node.visit(_ReplaceName("torch", TORCH_ALIAS))
            for node in module.body]
    code = module.with_changes(body=body).code
    return code, tagged_lines(code)


def from_import(source: str, marked: Set[int]) -> Variant:
    module = cst.parse_module(source)
    line = _import_torch(module)
    taken = _names_in(module) | BUILTINS | set(keyword.kwlist)
    names: List[str] = []

    class Collect(cst.CSTVisitor):
        def visit_Import(self, node):
            return False

        def visit_ImportFrom(self, node):
            return False

        def visit_Attribute(self, node):
            if isinstance(node.value, cst.Name) and node.value.value == "torch" \
                    and node.attr.value not in taken and node.attr.value not in names:
                names.append(node.attr.value)

    module.visit(Collect())
    if not names:
        raise NotApplicable("no `torch.NAME` free to import")

    class Replace(cst.CSTTransformer):
        def visit_Import(self, node):
            return False

        def visit_ImportFrom(self, node):
            return False

        def leave_Attribute(self, original, updated):
            if isinstance(updated.value, cst.Name) and updated.value.value == "torch" \
                    and updated.attr.value in names:
                return cst.Name(updated.attr.value, lpar=updated.lpar, rpar=updated.rpar)
            return updated

    from_line = cst.SimpleStatementLine(body=[cst.ImportFrom(
        module=cst.Name("torch"),
        names=[cst.ImportAlias(cst.Name(n), comma=cst.MaybeSentinel.DEFAULT) for n in names])])
    body = []
    for node in module.body:
        body.extend([line, from_line] if node is line else [node.visit(Replace())])
    code = module.with_changes(body=body).code
    return code, tagged_lines(code)


# ---------------------------------------------------------------- subclass

def subclass(source: str, marked: Set[int]) -> Variant:
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module)
    positions = wrapper.resolve(PositionProvider)
    module = wrapper.module
    taken = _names_in(module)
    body, moved = [], 0
    for node in module.body:
        position = positions[node]
        if not isinstance(node, cst.ClassDef) or not node.bases or node.keywords \
                or node.decorators or (marked and not any(
                    position.start.line <= line <= position.end.line for line in marked)):
            body.append(node)
            continue
        text = cst.Module([]).code_for_node(node)
        base = node.name.value + BASE_SUFFIX
        if base in taken or re.search(r"\bsuper\(\s*[^)\s]", text) or "__class__" in text \
                or "__slots__" in text or re.search(r"\b__[A-Za-z0-9]\w*(?<!__)\b", text) \
                or re.search(r"\b(__qualname__|__name__)\b", text):
            body.append(node)  # super(Name, self), name mangling, a class's own name
            continue
        body.append(node.with_changes(name=cst.Name(base)))
        body.append(node.with_changes(
            bases=[cst.Arg(cst.Name(base))],
            body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])]),
            leading_lines=[cst.EmptyLine(), cst.EmptyLine()]))
        moved += 1
    if not moved:
        raise NotApplicable("no class to split")
    code = module.with_changes(body=body).code
    return code, tagged_lines(code)


# ---------------------------------------------------------------- driver

WHOLE_FILE: Dict[str, Callable[[str, Set[int]], Variant]] = {
    "rename": rename, "into_main": into_main, "import_as": import_as,
    "from_import": from_import, "subclass": subclass}
AT_LINE: Dict[str, Callable[[str, int], Variant]] = {
    "temporaries": temporaries, "helper": helper, "method": method, "attr_holder": attr_holder,
    "alias": alias, "tuple": tuple_}
TRANSFORMS = ("rename", "into_main", "temporaries", "helper", "method", "attr_holder", "alias",
              "tuple", "import_as", "from_import", "subclass")
assert set(TRANSFORMS) == {*WHOLE_FILE, *AT_LINE}


def make_variants(source: str, transform: str, marked: Set[int]) -> List[Variant]:
    """The variants of ``source`` one transform makes (none where it does not apply or the
    result does not parse). Whole-file transforms make one; line transforms one per marked
    line (for a negative fixture, which has none, one per line that holds a call)."""
    tagged = tag_markers(source, marked)
    if transform in WHOLE_FILE:
        jobs = [lambda: WHOLE_FILE[transform](tagged, marked)]
    else:
        lines = sorted(marked) or _call_lines(source)
        jobs = [lambda line=line: AT_LINE[transform](tagged, line) for line in lines]
    variants = []
    for job in jobs:
        try:
            code, lines = job()
            ast.parse(code)
        except (NotApplicable, SyntaxError, cst.ParserSyntaxError):
            continue
        variants.append((code, lines))
    return variants


def _call_lines(source: str) -> List[int]:
    return sorted({n.lineno for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)})


@functools.lru_cache(maxsize=256)
def _findings(code: str, rule: str) -> Tuple[Tuple[int, str], ...]:
    """The rule's findings on ``code`` (a variant two transforms make alike is linted once)."""
    result = lint_source(code, "variant.py", (RULES_BY_CODE[rule],))
    if result.error is not None:
        raise RuntimeError(result.error.message)
    return tuple((f.line, f.code) for f in result.findings)


def caught(variant: Variant, expected: Set[Tuple[int, int, str]], rule: str) -> bool:
    code, lines = variant
    found = set(_findings(code, rule))
    return all(any((place, want) in found for place in lines.get(line, ()))
               for line, _, want in expected)


def run(rules: List[str], transforms: List[str]) -> dict:
    table = {}
    for rule in rules:
        negatives = [(path, path.read_text(encoding="utf-8"))
                     for path in sorted((FIXTURES / rule / "negative").glob("*.py"))]
        before = {path: len(_findings(source, rule)) for path, source in negatives}
        for transform in transforms:
            row = table.setdefault(f"{rule} {transform}", {
                "rule": rule, "transform": transform, "made": 0, "caught": 0, "missed": [],
                "negative_variants": 0, "new_negative_findings": 0, "negative_files": []})
            for path in sorted((FIXTURES / rule / "positive").glob("*.py")):
                if path.name.endswith(".fixed.py"):
                    continue
                source = path.read_text(encoding="utf-8")
                expected = {e for e in expected_in_text(source) if e[2] == rule}
                for variant in make_variants(source, transform, {e[0] for e in expected}):
                    row["made"] += 1
                    if caught(variant, expected, rule):
                        row["caught"] += 1
                    else:
                        row["missed"].append(path.name)
            for path, source in negatives:
                for code, _ in make_variants(source, transform, set()):
                    row["negative_variants"] += 1
                    new = len(_findings(code, rule)) - before[path]
                    if new > 0:
                        row["new_negative_findings"] += new
                        row["negative_files"].append(path.name)
    return table


def render(table: dict) -> str:
    out = ["| rule | transform | variants | caught | recall | negative variants | new findings |",
           "|---|---|---|---|---|---|---|"]
    for row in table.values():
        recall = f"{row['caught'] / row['made']:.2f}" if row["made"] else "–"
        out.append(f"| {row['rule']} | {row['transform']} | {row['made']} | {row['caught']} | "
                   f"{recall} | {row['negative_variants']} | {row['new_negative_findings']} |")
    totals = {}
    for row in table.values():
        t = totals.setdefault(row["transform"], [0, 0, 0, 0])
        t[0] += row["made"]; t[1] += row["caught"]  # noqa: E702
        t[2] += row["negative_variants"]; t[3] += row["new_negative_findings"]  # noqa: E702
    for name, (made, hit, neg, new) in totals.items():
        recall = f"{hit / made:.2f}" if made else "–"
        out.append(f"| all | {name} | {made} | {hit} | {recall} | {neg} | {new} |")
    return "\n".join(out)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", help="comma-separated rule codes (default: every fixture rule)")
    parser.add_argument("--transforms", help=f"comma-separated, of {','.join(TRANSFORMS)}")
    parser.add_argument("--json", metavar="FILE", help="write the table as JSON")
    args = parser.parse_args(argv)
    rules = sorted(p.name for p in FIXTURES.glob("TDL*") if p.name in RULES_BY_CODE)
    if args.rules:
        wanted = args.rules.split(",")
        unknown = [r for r in wanted if r not in rules]
        if unknown:
            parser.error(f"unknown rules: {','.join(unknown)}")
        rules = wanted
    transforms = list(TRANSFORMS)
    if args.transforms:
        transforms = args.transforms.split(",")
        unknown = [t for t in transforms if t not in TRANSFORMS]
        if unknown:
            parser.error(f"unknown transforms: {','.join(unknown)}")
    try:
        table = run(rules, transforms)
    except Exception as exc:  # a benchmark crash, not a recall figure
        print(f"variants: crashed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(render(table))
    if args.json:
        Path(args.json).write_text(json.dumps(list(table.values()), indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
