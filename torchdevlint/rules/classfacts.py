"""What the ast prefilters of the module-state rules (TDL005, TDL006) read from a file, shared
by both: for each method of each class that has a base, the ``self`` attributes its
statements assign (and whether to a container display), and, from the method's text,
whether it calls a torch factory and which attributes other methods mention. Both rules
report only an attribute assigned in one method and read in another (not ``__init__``), so a
file without such a pair needs no LibCST parse.

Only statements are walked (not expressions): reads, factory calls and fills are looked for
in the source text of each method, a superset of what the rules need (a mention is not always
a read), which keeps the prefilter sound and costs a few regular expressions per method
instead of a walk of every expression node (measured on torch: the full ast walk cost 15% of
a lint run, this costs about 1%).

The result is memoised for the last tree: the engine asks every candidate rule in a row.
"""

from __future__ import annotations

import ast
from typing import Dict, List, NamedTuple, Optional, Set, Tuple

from torchdevlint import torch_api as api
from torchdevlint.rules.prefilter import ast_statements, nodes_of
from torchdevlint.textsearch import attribute_mentions, constructs_class, words

# What TDL005 takes for a tensor created on the CPU with a dimension (its origins).
FACTORY_CALLS = (api.ALWAYS_SHAPED_FACTORIES | api.INDEX_FACTORIES | api.SIZE_FACTORIES
                 | api.DATA_FACTORIES | api.LEGACY_TENSOR_TYPES | api.TRIANGLE_FUNCTIONS
                 | api.STATE_FACTORY_EXTRAS)
_FACTORY_TEXT = words(FACTORY_CALLS)
_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp,
               ast.GeneratorExp)


class MethodFacts(NamedTuple):
    name: str
    self_name: str
    text: str  # the method's source lines
    stored: Set[str]  # self attributes its statements assign
    # ... assigned a display or comprehension with a call among its items
    containers: Set[str]
    empty: Set[str]  # ... assigned an empty list or dict (``[]``, ``{}``, ``list()``, ``dict()``)
    calls_factory: bool  # its text names a torch factory
    # self attributes assigned a local name / a call of a function or method, by that name
    stored_names: Dict[str, str]
    stored_calls: Dict[str, str]
    local_lists: Set[str]  # local names it assigns a display, comprehension or empty container
    returns_list: bool  # a ``return`` of a display or comprehension of calls, or of a local list
    # self attributes every assignment of which here is plainly no created tensor: a constant,
    # ``Parameter(...)`` (registered), or a parameter of the method whose default is no call
    plain: Set[str] = frozenset()


class FileFacts(NamedTuple):
    classes: List[Tuple[str, List[MethodFacts]]]  # (the class's source, its methods' facts)
    functions: Dict[str, MethodFacts]  # the file's top-level functions, by name


_last: Optional[Tuple[ast.AST, FileFacts]] = None


def class_methods(tree: ast.AST, source: str) -> List[Tuple[str, List[MethodFacts]]]:
    """(the class's source, its methods' facts) for each class of ``tree`` with a base."""
    return file_facts(tree, source).classes


def file_facts(tree: ast.AST, source: str) -> FileFacts:
    """The facts of ``tree``'s classes with a base and of its top-level functions (which a
    method may call to build its state: ``self.pe = sinusoid_table(n, d)``)."""
    global _last
    if _last is not None and _last[0] is tree:
        return _last[1]
    lines = source.splitlines(keepends=True)
    classes = []
    could_be_module = _ModuleClasses(tree).could_be_module
    for node in ast_statements(tree):
        if not isinstance(node, ast.ClassDef) or not could_be_module(node):
            continue
        methods = [_method_facts(item, lines) for item in node.body
                   if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and (item.args.posonlyargs or item.args.args)]
        classes.append(("".join(lines[node.lineno - 1:node.end_lineno]), methods))
    functions = {node.name: _method_facts(node, lines) for node in getattr(tree, "body", ())
                 if isinstance(node, ast.FunctionDef)} if classes else {}
    _last = (tree, FileFacts(classes, functions))
    return _last[1]


# What binds a name, as _ModuleClasses reads it (match patterns only where Python has them).
_BINDING_NODES = tuple(
    getattr(ast, name) for name in (
        "Import", "ImportFrom", "ClassDef", "Name", "FunctionDef", "AsyncFunctionDef", "arg",
        "ExceptHandler", "Global", "Nonlocal", "MatchAs", "MatchStar", "MatchMapping")
    if hasattr(ast, name))


class _ModuleClasses:
    """Which classes of a file can be ``nn.Module``s as the analysis decides it
    (``KindInference.class_is_module``, True only when proven): a base that an import names
    and ``torch_api.module_base`` accepts, or a class of the file that is one. Anything the
    analysis could still resolve another way (a base bound by an assignment, a call, a name
    bound both ways) counts as a possible module, so the test loses no finding; a base from
    a relative import, another library or a builtin does not (torch's ``distributions`` and
    ``nn/modules``: 47 of 69 files that the rules' text prefilters let through)."""

    def __init__(self, tree: ast.AST) -> None:
        self.imports: Dict[str, Set[str]] = {}  # name -> what import statements bind it to
        self.other: Set[str] = set()  # names bound any other way (assigned, defined, ...)
        self.classes: Dict[str, List[ast.ClassDef]] = {}
        # (the nodes of the prefilters' shared walk: the tree is walked once for all of them)
        for node in nodes_of(tree, *_BINDING_NODES):
            kind = type(node)
            if kind is ast.Import:
                for alias in node.names:
                    if alias.asname:
                        self.imports.setdefault(alias.asname, set()).add(alias.name)
                    else:
                        top = alias.name.split(".")[0]
                        self.imports.setdefault(top, set()).add(top)
            elif kind is ast.ImportFrom:
                module = "." * (node.level or 0) + (node.module or "")
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    qualified = f"{module}.{alias.name}" if module and not module.endswith(".") \
                        else module + alias.name
                    self.imports.setdefault(alias.asname or alias.name, set()).add(qualified)
            elif kind is ast.ClassDef:
                self.classes.setdefault(node.name, []).append(node)
            elif kind is ast.Name:
                if type(node.ctx) is not ast.Load:
                    self.other.add(node.id)
            elif kind in (ast.FunctionDef, ast.AsyncFunctionDef):
                self.other.add(node.name)
            elif kind is ast.arg:
                self.other.add(node.arg)
            elif kind is ast.ExceptHandler and node.name:
                self.other.add(node.name)
            elif kind in (ast.Global, ast.Nonlocal):
                self.other.update(node.names)
            elif kind.__name__ in ("MatchAs", "MatchStar") and node.name:
                self.other.add(node.name)
            elif kind.__name__ == "MatchMapping" and node.rest:
                self.other.add(node.rest)
        self._memo: Dict[int, bool] = {}

    def could_be_module(self, node: ast.ClassDef) -> bool:
        key = id(node)
        if key not in self._memo:
            self._memo[key] = False  # a cycle of bases proves nothing
            self._memo[key] = any(self._base_could_be_module(base) for base in node.bases) or (
                # a base of another file that the analysis cannot resolve, in a class that
                # defines ``forward`` (``ModuleClasses.shows_it_is_a_module``)
                any(type(item) is ast.FunctionDef and item.name == "forward" for item in node.body)
                and any(self._base_unknown(base) for base in node.bases))
        return self._memo[key]

    def _base_unknown(self, base: ast.expr) -> bool:
        """An imported base that ``torch_api.module_base`` cannot tell about."""
        chain = []
        while type(base) is ast.Attribute:
            chain.append(base.attr)
            base = base.value
        if type(base) is not ast.Name or base.id in self.classes:
            return False
        imports = self.imports.get(base.id, ())
        return any(api.foreign_base(".".join([qualified, *reversed(chain)]))
                   for qualified in imports)

    def _base_could_be_module(self, base: ast.expr) -> bool:
        if type(base) is ast.Subscript:  # Generic[T], Module[...]
            base = base.value
        chain = []
        while type(base) is ast.Attribute:
            chain.append(base.attr)
            base = base.value
        if type(base) is not ast.Name:
            return True  # a call, a conditional: the analysis may know more
        name = base.id
        if name in self.other:
            return True
        imports = self.imports.get(name, ())
        classes = self.classes.get(name, ())
        if imports and classes:
            return True
        if classes:
            return bool(chain) or any(self.could_be_module(c) for c in classes)
        if not imports:
            return False  # unbound here: a builtin (object, dict, Exception), no module
        if len(imports) > 1:
            return True
        [qualified] = imports
        qualified = ".".join([qualified, *reversed(chain)])
        return api.module_base(qualified) is True


def _method_facts(method, lines: list) -> MethodFacts:
    """The facts of a method (its first parameter is ``self``) or of a top-level function."""
    arguments = method.args.posonlyargs or method.args.args
    first = arguments[0].arg if arguments else ""
    text = "".join(lines[method.lineno - 1:method.end_lineno])
    stored: Set[str] = set()
    containers: Set[str] = set()
    empty: Set[str] = set()
    stored_names: Dict[str, str] = {}
    stored_calls: Dict[str, str] = {}
    local_lists: Set[str] = set()
    returned = []
    plain: Set[str] = set()
    not_plain: Set[str] = set()
    defaults = method.args.defaults
    positional = method.args.posonlyargs + method.args.args
    given = {a.arg for a in positional[:len(positional) - len(defaults)]}
    given |= {a.arg for a, d in zip(positional[len(positional) - len(defaults):], defaults)
              if type(d) is not ast.Call}
    given |= {a.arg for a, d in zip(method.args.kwonlyargs, method.args.kw_defaults)
              if type(d) is not ast.Call}
    given.discard(first)
    for statement in ast_statements(method):
        kind = type(statement)
        if (kind is ast.Assign or kind is ast.AnnAssign) and statement.value is not None:
            for target, value in _assigned_pairs(
                    statement.targets if kind is ast.Assign else [statement.target],
                    statement.value):
                shape = _container(value)
                if type(target) is ast.Attribute and type(target.value) is ast.Name \
                        and target.value.id == first:
                    stored.add(target.attr)
                    (plain if _plainly_no_tensor(value, given) else not_plain).add(target.attr)
                    if shape == "empty":
                        empty.add(target.attr)
                    elif shape == "calls":
                        containers.add(target.attr)
                    elif type(value) is ast.Name:
                        stored_names[target.attr] = value.id
                    elif type(value) is ast.Call and type(value.func) in (ast.Name, ast.Attribute):
                        func = value.func
                        stored_calls[target.attr] = func.id if type(func) is ast.Name else func.attr
                elif type(target) is ast.Name and shape is not None:
                    local_lists.add(target.id)
        elif kind is ast.Return and statement.value is not None:
            returned.append(statement.value)
    calls_factory = bool(stored) and _FACTORY_TEXT.search(text) is not None
    returns_list = any(_container(value) == "calls" or (
        type(value) is ast.Name and value.id in local_lists) for value in returned)
    return MethodFacts(method.name, first, text, stored, containers, empty, calls_factory,
                       stored_names, stored_calls, local_lists, returns_list,
                       plain - not_plain)


def _assigned_pairs(targets, value):
    """(target, value) of an assignment's targets; ``a, b = x, y`` (a display of as many
    elements, none starred) gives each target its own element, as the analysis binds them."""
    for target in targets:
        if type(target) in (ast.Tuple, ast.List) and type(value) in (ast.Tuple, ast.List) \
                and len(target.elts) == len(value.elts) and not any(
                    type(e) is ast.Starred for e in (*target.elts, *value.elts)):
            yield from zip(target.elts, value.elts)
        else:
            yield target, value


def _plainly_no_tensor(value: ast.expr, given: Set[str]) -> bool:
    """A value no TDL005 finding can be about: a constant (``None``, ``0.5``, ``-1``), a
    ``Parameter(...)`` (registered, and moved with the module), or a parameter of the method
    whose default is no call (a tensor given by the caller is not one the module creates)."""
    if type(value) is ast.UnaryOp:
        value = value.operand
    if type(value) is ast.Constant:
        return True
    if type(value) is ast.Name:
        return value.id in given
    if type(value) is ast.BinOp:  # ``embed_dim // num_heads``
        return _plainly_no_tensor(value.left, given) and _plainly_no_tensor(value.right, given)
    if type(value) is ast.Call:
        func = value.func
        if type(func) is ast.Name and func.id in api.PLAIN_BUILTINS:  # ``tuple(shape)``
            return all(_plainly_no_tensor(a, given) for a in value.args) and not value.keywords
        name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute \
            else None
        return name in api.PARAMETER_CLASS_NAMES
    return False



def _container(value: ast.expr) -> Optional[str]:
    """"empty" for ``[]``, ``{}``, ``list()``, ``dict()``; "calls" for a display or
    comprehension with a call among its items (a module is built by a call); else None."""
    if type(value) is ast.Call:
        if type(value.func) is ast.Name and value.func.id in ("list", "dict") and not value.args:
            return "empty"
        return None
    if not isinstance(value, _CONTAINERS):
        return None
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        items = value.elts
    elif isinstance(value, ast.Dict):
        items = value.values
    elif isinstance(value, ast.DictComp):
        items = [value.value]
    else:
        items = [value.elt]
    if not items:
        return "empty" if isinstance(value, (ast.List, ast.Dict)) else None
    return "calls" if any(type(item) is ast.Call for item in items) else None


def assigned_and_read_elsewhere(tree: ast.AST, source: str, containers: bool) -> bool:
    """Whether some class assigns an attribute in one method (a container of calls, an empty
    container the class fills, or anything in a method that names a torch factory) that a
    different method, not ``__init__``, mentions."""
    facts = file_facts(tree, source)
    functions = facts.functions
    for class_text, methods in facts.classes:
        assigned = []
        helpers: Optional[Set[str]] = None  # methods naming a factory (what they return may be)
        for method in methods:
            if containers:
                names = set(method.containers)
                if method.empty:  # filled: ``.append(``/``.extend(``/``.insert(``/``[k] =``
                    names |= attribute_mentions(class_text, method.self_name, method.empty,
                                       r"\s*(?:\.\s*(?:append|extend|insert)\s*\(|\[)")
                # ``self.layers = modules`` (a local list), ``self.blocks = make_blocks(n)``
                names |= {name for name, local in method.stored_names.items()
                          if local in method.local_lists}
                if method.stored_calls:
                    listing = {m.name for m in methods if m.returns_list} | \
                        {f.name for f in functions.values() if f.returns_list}
                    names |= {name for name, callee in method.stored_calls.items()
                              if callee in listing}
            else:
                names = method.stored if method.name in api.MODULE_MODE_SWITCHES else \
                    method.stored - method.plain if method.calls_factory else set()
                if method.stored and not names:
                    # ``self.pe = self._make_pe(n)``: a factory in a helper it calls
                    if helpers is None:
                        helpers = _factory_helpers(methods)
                    if helpers and attribute_mentions(method.text, method.self_name, helpers,
                                                      r"\s*\("):
                        names = method.stored
                    # ``self.pe = sinusoid_table(n, d)``: a function of the file naming one
                    elif any(callee in functions and _FACTORY_TEXT.search(functions[callee].text)
                             for callee in method.stored_calls.values()):
                        names = method.stored
                    # ``self.weight = weight`` of a class the file constructs with a tensor
                    # (``WeightedLoss(torch.tensor([1., 2.]))``; KindInference.caller_arguments)
                    elif method.name == "__init__" and method.stored_names and \
                            _constructed_with_a_factory(class_text, source):
                        names = set(method.stored_names)
            if names:
                assigned.append((method, names))
        if not assigned:
            continue
        # (a subclass's methods read what a base class's ``__init__`` set: every class of the
        # file is a possible reader, ``ModuleClasses._inherit``)
        for reader in (m for _, readers in facts.classes for m in readers):
            if reader.name == "__init__":
                continue
            for method, names in assigned:
                if method is not reader and attribute_mentions(reader.text, reader.self_name, names):
                    return True
    return False


def _constructed_with_a_factory(class_text: str, source: str) -> bool:
    """Whether the file calls the class (not on its own ``class`` line) and names a torch
    factory outside the class."""
    rest = source.replace(class_text, "", 1)
    return constructs_class(class_text, rest) and _FACTORY_TEXT.search(rest) is not None


def _factory_helpers(methods) -> Set[str]:
    """The methods that name a torch factory, or call (through their receiver) a method that
    does: ``self.tem = self.make(n)`` where ``make`` returns ``self.one_hot(n)``."""
    helpers = {m.name for m in methods if _FACTORY_TEXT.search(m.text)}
    while True:
        more = {m.name for m in methods if m.name not in helpers and helpers and
                attribute_mentions(m.text, m.self_name, helpers, r"\s*\(")}
        if not more:
            return helpers
        helpers |= more


def tensor_attribute_in(tree: ast.AST, source: str) -> bool:
    """TDL005's ast prefilter. Every finding is a ``self.NAME = ...`` in a method that calls a
    torch factory (the value, or a local name bound to one) and a read of ``self.NAME`` in
    another method, not ``__init__``: most files that name a class and torch have no such pair."""
    return assigned_and_read_elsewhere(tree, source, containers=False)


def module_container_in(tree: ast.AST, source: str) -> bool:
    """TDL006's ast prefilter. Every finding is ``self.NAME = <container>`` in one method of a
    class and a read of ``self.NAME`` in another method, not ``__init__``."""
    return assigned_and_read_elsewhere(tree, source, containers=True)
