"""What the rules' prefilters are written with, importable without LibCST.

A rule's ``required_text`` and ``could_report_in`` decide, before any parse, whether a file
can hold its findings. They run on every file, also in runs that analyse none (every file
cached or skipped), which must not pay for importing LibCST: so they, and what they use, live
here and in ``classfacts``, never beside the LibCST code of the rule (see ``registry``).
"""

from __future__ import annotations

import ast
import re
from typing import Iterator, List, Optional

# Fields of Python's ast that hold blocks of statements (``handlers`` and ``cases`` hold the
# ``except`` and ``case`` clauses, whose own ``body`` is such a block).
BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def ast_statements(root: ast.AST):
    """``root`` and every statement under it, without visiting expressions (a tenth of the
    nodes): what the ``could_report_in`` prefilters walk."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        for name in BLOCK_FIELDS:
            block = getattr(node, name, None)
            if block:
                stack.extend(block)


# What Python allows between two tokens: whitespace, line continuations and comments. (A
# comment must end in a newline to be followed by a token; requiring it keeps the pattern
# linear: a comment cannot be split into several.)
TOKEN_GAP = r"(?:[\s\\]|#[^\r\n]*[\r\n])*"


# The nodes of the last tree asked about, by type, in ``ast.walk``'s order: the ast
# prefilters of one file share one walk of every node, which costs as much as a tenth of
# the file's LibCST parse; each prefilter then reads the types it needs.
_WALKED: list = [None, {}]


def nodes_of(tree: ast.AST, *types: type) -> list:
    """``tree``'s nodes of these exact types (ast has no subclasses of its node types), in
    ``ast.walk``'s order for each type."""
    if _WALKED[0] is not tree:
        by_type: dict = {}
        for node in ast.walk(tree):
            kind = type(node)
            found = by_type.get(kind)
            if found is None:
                by_type[kind] = [node]
            else:
                found.append(node)
        _WALKED[0], _WALKED[1] = tree, by_type
    by_type = _WALKED[1]
    if len(types) == 1:
        return by_type.get(types[0], [])
    return [node for kind in types for node in by_type.get(kind, ())]


def forget_walk() -> None:
    """Drop the shared walk (the engine does, once a file's prefilters are done)."""
    _WALKED[0], _WALKED[1] = None, {}


def method_call_text(*names: str) -> str:
    """Text of a call of one of these methods: ``x.to(``, ``x . cuda  (``."""
    return rf"\.{TOKEN_GAP}(?:{'|'.join(names)})\b{TOKEN_GAP}\("


# TDL001's moves: each returns a new tensor and leaves its receiver where it was.
MOVE_METHODS = ("to", "cuda", "cpu")


def move_statement_in(tree: ast.AST, source: str) -> bool:
    """TDL001's ast prefilter: only a move that is a whole expression statement is reported;
    ``.to(`` is in most files, such a statement in few."""
    return any(isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
               and isinstance(statement.value.func, ast.Attribute)
               and statement.value.func.attr in MOVE_METHODS
               for statement in ast_statements(tree))


# -- the names the prefilters below look for (the rules import them from here) -----------

# torch's factories (``torchdevlint.analysis`` knows them as ``api.FACTORIES``; a test keeps
# the two equal, as this module may not import the analysis, which imports LibCST).
TORCH_FACTORIES = frozenset(
    """
    tensor as_tensor asarray from_numpy zeros ones empty full rand randn randint randperm
    arange range linspace logspace eye tril_indices triu_indices Tensor FloatTensor
    LongTensor IntTensor BoolTensor DoubleTensor HalfTensor ByteTensor
    """.split())
# TDL007: factories whose result always has a dimension, those whose size arguments say, and
# every factory it reports.
ALWAYS_SHAPED_FACTORIES = frozenset("arange linspace logspace randperm eye".split())
SIZE_FACTORIES = frozenset("zeros ones empty rand randn full".split())
OFF_DEVICE_FACTORIES = ALWAYS_SHAPED_FACTORIES | SIZE_FACTORIES | frozenset(("tensor", "randint"))
# TDL011: factories given sizes, and those that make a tensor of their data (0-dim from a
# number).
SIZED_FACTORIES = frozenset(
    """zeros ones empty full rand randn randint zeros_like ones_like empty_like full_like rand_like
    randn_like""".split())
SCALAR_FACTORIES = frozenset("tensor as_tensor from_numpy scalar_tensor asarray".split())
_MOVE_TEXT = re.compile(method_call_text("to", "cuda") + "|DataParallel")
# TDL009 (``rules/factories``): torch factories that compute their values.
GENERATING = frozenset(
    "zeros ones empty full eye arange linspace logspace rand randn randint randperm".split())


def off_device_factory_in(tree: ast.AST, source: str) -> bool:
    """TDL007's ast prefilter.

    Every finding is a factory call without ``device=`` (nor ``**kwargs``, which may carry
    one) in a method of a class that defines ``forward``. The factory is named
    ``<...>.zeros`` or by a name imported from torch (``qualname`` resolves nothing else).
    Most files that name a class and torch have no such call: in torch's nn, optim,
    utils/data and distributions this spares 93 parses of 159.
    """
    imported = _imported_from_torch(tree, source, OFF_DEVICE_FACTORIES)
    for node in nodes_of(tree, ast.ClassDef):
        if not any(
                isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                and item.name == "forward" for item in ast.walk(node)):
            continue
        for call in ast.walk(node):
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            if not ((isinstance(func, ast.Attribute) and func.attr in OFF_DEVICE_FACTORIES)
                    or (isinstance(func, ast.Name) and func.id in imported)):
                continue
            if not any(k.arg in ("device", None) for k in call.keywords) and \
                    not any(isinstance(a, ast.Starred) for a in call.args):
                return True
    return False


def created_then_moved_in(tree: ast.AST, source: str) -> bool:
    """TDL009's ast prefilter.

    Every finding is a move called on a factory call: ``torch.zeros(3).to(device)`` /
    ``.cuda()``, the factory named ``<...>.zeros`` or by a name imported from torch. The text
    prefilter (``).to(``) also passes on every ``f(x).to(device)``: in torch's own sources
    this spares most of the files it keeps.
    """
    imported = _imported_from_torch(tree, source, GENERATING)
    for node in nodes_of(tree, ast.Call):
        if isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("to", "cuda") and isinstance(node.func.value, ast.Call):
            factory = node.func.value.func
            if (isinstance(factory, ast.Attribute) and factory.attr in GENERATING) or \
                    (isinstance(factory, ast.Name) and factory.id in imported):
                return True
    return False


def numpy_of_moved_in(tree: ast.AST, source: str) -> bool:
    """TDL008's ast prefilter.

    A finding needs a conversion (``x.numpy()`` with no argument, ``array(x)`` /
    ``asarray(x)``) and evidence, somewhere in the file, of a tensor on an accelerator, each
    of which starts at a call: a move (``.cuda()``, ``.to()`` of something other than a CPU
    string; a moved model and a DataParallel wrapper of one need one too) or a ``device=``
    other than a CPU string. The text prefilter (``numpy`` or ``array``, and ``.to(`` or
    ``device``) passes on most of torch; this spares 112 of its files, 25 of them parsed for
    no other rule.
    """
    conversion = evidence = False
    for node in nodes_of(tree, ast.Call):
        func = node.func
        name = _last_name(func)
        if name == "numpy":
            conversion = conversion or (isinstance(func, ast.Attribute) and not node.args
                                        and not node.keywords)
        elif name in ("array", "asarray"):
            conversion = conversion or any(not isinstance(a, ast.Starred) for a in node.args)
        evidence = evidence or _moves(node) or any(
            k.arg == "device" and not _cpu_constant(k.value) for k in node.keywords)
        if conversion and evidence:
            return True
    return False


def _imported_from_torch(tree: ast.AST, source: str, names) -> set:
    """The names bound by ``from torch import NAME [as ALIAS]`` for these ``names``."""
    if not re.search(r"\bfrom\s+torch\s+import\b", source):
        return set()
    return {alias.asname or alias.name for node in nodes_of(tree, ast.ImportFrom)
            if node.module == "torch"
            for alias in node.names if alias.name in names}


def accumulating_loop_in(tree: ast.AST, source: str) -> bool:
    """TDL010's ast prefilter.

    Every finding is an accumulation inside a ``for`` loop: ``+=`` / ``-=``, an assignment
    of a sum or difference, or an ``append``/``extend``/``insert`` statement. Files naming a
    loader have loops, but mostly none accumulating: in torch's utils/data this spares 9
    parses no other default rule makes.
    """
    return any(any(
        (isinstance(inner, ast.AugAssign) and isinstance(inner.op, (ast.Add, ast.Sub)))
        or (isinstance(inner, ast.Assign) and any(
            isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub))
            for n in ast.walk(inner.value)))
        or (isinstance(inner, ast.Expr) and isinstance(inner.value, ast.Call)
            and isinstance(inner.value.func, ast.Attribute)
            and inner.value.func.attr in ("append", "extend", "insert"))
        for statement in node.body for inner in ast.walk(statement))
        for node in nodes_of(tree, ast.For, ast.AsyncFor))


def mixed_devices_in(tree: ast.AST, source: str) -> bool:
    """TDL011's ast prefilter.

    Both sides' evidence is found in the body of the function (or the module's code) where
    they meet: a CPU tensor made there (a torch factory, ``.cpu()``, a ``.to()``) and, there
    too, a move or a ``device=`` that is no CPU string, or the call of a model moved
    somewhere in the file. Library code, where every tensor is created on another tensor's
    device (``device=x.device``) in one function and factories run in another, is skipped
    unparsed: in torch's nn, optim, utils/data and distributions this spares 21 of the 24
    files no other rule parses.
    """
    says_cpu = "cpu" in source
    calling_models = []  # the calls of scopes with a CPU tensor and no move of their own
    for calls in _calls_by_scope(tree):
        accelerator = cpu = False
        for call in calls:
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else \
                func.id if isinstance(func, ast.Name) else None
            devices = [k.value for k in call.keywords if k.arg == "device"]
            if name == "to":
                devices += call.args[:1]
            if name == "cuda" or any(not _cpu_constant(d) for d in devices):
                accelerator = True
            if name is not None and (name in TORCH_FACTORIES or name.endswith("_like")):
                # Made on the CPU: without a device (a ``*_like`` is then where its
                # argument is), or given one that is the CPU; 0-dim ones are no
                # evidence, they combine with any device.
                if (says_cpu if devices else not name.endswith("_like")) and \
                        not _scalar_made(name, call):
                    cpu = True
            elif name == "cpu" or (says_cpu and (devices or name == "to")):
                cpu = True
            if accelerator and cpu:
                return True
        if cpu:
            calling_models.append(calls)
    if not calling_models or not _MOVE_TEXT.search(source):
        return False  # a moved model needs a ``.to(`` / ``.cuda(`` or a DDP wrapper
    moved = _moved_names(tree)  # (a second walk: only for the files that get here)
    return any(_last_name(call.func) in moved or (
        isinstance(call.func, ast.Attribute) and _last_name(call.func.value) in moved)
        for calls in calling_models for call in calls)


def _calls_by_scope(tree: ast.AST) -> Iterator[List[ast.Call]]:
    """The calls of each function body, of the module's own code and of each class body (a
    lambda's or a comprehension's with the code around it, as ``analysis.on_cpu`` judges
    them)."""
    stack = [tree]
    while stack:
        owner = stack.pop()
        calls = []
        inner = list(ast.iter_child_nodes(owner))
        while inner:
            node = inner.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.append(node)  # its own scope (its decorators and defaults: its own too)
                continue
            if isinstance(node, ast.Call):
                calls.append(node)
            inner.extend(ast.iter_child_nodes(node))
        yield calls


def _moved_names(tree: ast.AST) -> set:
    """The last names of everything a model moved to a device may be called by: receivers of
    ``.to()`` / ``.cuda()``, what is bound to a value holding such a call or a DataParallel /
    DDP wrapper, and the parameters of functions given one of those (three levels deep, as
    ``placement.moved_model`` follows them)."""
    calls = nodes_of(tree, ast.Call)
    moved = {_last_name(call.func.value) for call in calls if _moves(call)}
    bound = [(node.targets, node.value) for node in nodes_of(tree, ast.Assign)]  # (targets, value)
    bound += [([node.target], node.value)
              for node in nodes_of(tree, ast.AnnAssign, ast.AugAssign, ast.NamedExpr) if node.value]
    bound += [([node.target], node.iter) for node in nodes_of(tree, ast.For, ast.AsyncFor)]
    bound += [([node.optional_vars], node.context_expr)
              for node in nodes_of(tree, ast.withitem) if node.optional_vars is not None]
    functions = {}
    for node in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef):
        args = node.args
        functions.setdefault(node.name, set()).update(
            a.arg for a in args.posonlyargs + args.args + args.kwonlyargs)
    for targets, value in bound:
        if any(isinstance(call, ast.Call) and (_moves(call) or (_last_name(call.func) or "")
                                               .endswith(("DataParallel", "DistributedDataParallel")))
               for call in ast.walk(value)):
            moved.update(_last_name(n) for t in targets for n in ast.walk(t)
                         if isinstance(n, (ast.Name, ast.Attribute)))
    for _ in range(3):
        grown = False
        for call in calls:
            parameters = functions.get(_last_name(call.func))
            if parameters and not parameters <= moved and any(
                    _last_name(a.value if isinstance(a, ast.keyword) else a) in moved
                    for a in [*call.args, *call.keywords]):
                moved |= parameters
                grown = True
        if not grown:
            break
    moved.discard(None)
    return moved


def _scalar_made(name: str, call: ast.Call) -> bool:
    """``torch.tensor(1.0)``, ``torch.as_tensor(step)``, ``torch.zeros(())``: what
    ``_may_be_scalar`` takes for a 0-dim tensor (data other than a literal list, an empty
    size)."""
    if name in SCALAR_FACTORIES:
        first = call.args[0] if call.args else None
        return not (isinstance(first, ast.ListComp) or (
            isinstance(first, (ast.List, ast.Tuple)) and first.elts))
    if name in SIZED_FACTORIES and not name.endswith("_like"):
        sizes = call.args[-1:] if name == "randint" else call.args[:1] if name == "full" \
            else call.args
        return (not sizes or any(isinstance(s, (ast.Tuple, ast.List)) and not s.elts
                                 for s in sizes)) and not any(k.arg == "size" for k in call.keywords)
    return False


def _moves(call: ast.Call) -> bool:
    """``X.cuda()``, or ``X.to(...)`` given a device that is no CPU string (``.to(dtype=...)``
    alone moves nothing)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in ("to", "cuda"):
        return False
    if func.attr == "cuda":
        return True
    devices = call.args[:1] + [k.value for k in call.keywords if k.arg in ("device", None)]
    return any(not _cpu_constant(d) for d in devices)


def _last_name(expr) -> Optional[str]:
    if isinstance(expr, ast.Starred):
        expr = expr.value
    return expr.attr if isinstance(expr, ast.Attribute) else \
        expr.id if isinstance(expr, ast.Name) else None


def _cpu_constant(expr) -> bool:
    return isinstance(expr, ast.Constant) and isinstance(expr.value, str) and "cpu" in expr.value
