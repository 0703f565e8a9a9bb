"""What the rules' prefilters are written with, importable without LibCST.

A rule's ``required_text`` and ``could_report_in`` decide, before any parse, whether a file
can hold its findings. They run on every file, also in runs that analyse none (every file
cached or skipped), which must not pay for importing LibCST: so they, and what they use, live
here and in ``classfacts``, never beside the LibCST code of the rule (see ``registry``).
"""

from __future__ import annotations

import ast
import bisect
from typing import Iterator, List, Optional, Sequence, Set

from torchdevlint import torch_api as api
from torchdevlint.syntax import BLOCK_FIELDS
from torchdevlint.textsearch import imports_from_torch, method_calls


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


# The last tree asked about, walked once for every ast prefilter of its file (a walk of
# every node costs as much as a tenth of the file's LibCST parse): its nodes by type, and
# its calls by the scope whose code makes them and by the callee's name. Each prefilter then
# reads what it needs.
class _Walk:
    def __init__(self, tree: ast.AST) -> None:
        self.tree = tree
        self.by_type: dict = {}
        # scope (module, function or class node) -> its calls, and the names its lambdas
        # and comprehensions bind for themselves
        self.calls: dict = {}
        self.rebound: dict = {}
        self.parents: dict = {}  # function or class node -> the scope it is defined in
        self.calls_by_name: dict = {}  # the callee's last name -> [(call, its scope)]
        self.instance_names: Optional[set] = None  # (``_instance_names``, asked lazily)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_WALKED: List[Optional[_Walk]] = [None]


def _walked(tree: ast.AST) -> _Walk:
    """One pass over every node, depth first with a stack: a quarter less time than
    ``ast.walk`` and its generators (400 of torch's files: 0.73 -> 0.53 s), with the scope of
    each node at hand."""
    walk = _WALKED[0]
    if walk is not None and walk.tree is tree:
        return walk
    walk = _WALKED[0] = _Walk(tree)
    by_type, calls, rebound, parents = walk.by_type, walk.calls, walk.rebound, walk.parents
    by_name = walk.calls_by_name
    node_type, scopes = ast.AST, _SCOPES
    stack = [(tree, tree)]
    pop, push = stack.pop, stack.append
    while stack:
        node, scope = pop()
        kind = type(node)
        found = by_type.get(kind)
        if found is None:
            by_type[kind] = [node]
        else:
            found.append(node)
        if kind is ast.Call:
            found = calls.get(scope)
            if found is None:
                calls[scope] = [node]
            else:
                found.append(node)
            func = node.func
            name = func.attr if type(func) is ast.Attribute else \
                func.id if type(func) is ast.Name else None
            found = by_name.get(name)
            if found is None:
                by_name[name] = [(node, scope)]
            else:
                found.append((node, scope))
        elif kind in scopes:
            parents[node] = scope
            scope = node  # (its decorators and defaults too, as ``analysis.on_cpu`` has them)
        elif kind is ast.comprehension:
            rebound.setdefault(scope, set()).update(
                n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
        elif kind is ast.Lambda:
            rebound.setdefault(scope, set()).update(
                a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg))
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type):
                        push((item, scope))
            elif isinstance(value, node_type):
                push((value, scope))
    return walk


def nodes_of(tree: ast.AST, *types: type) -> list:
    """``tree``'s nodes of these exact types (ast has no subclasses of its node types), in
    no particular order."""
    by_type = _walked(tree).by_type
    if len(types) == 1:
        return by_type.get(types[0], [])
    return [node for kind in types for node in by_type.get(kind, ())]


def forget_walk() -> None:
    """Drop the shared walk (the engine does, once a file's prefilters are done)."""
    _WALKED[0] = None


# TDL001's moves: each returns a new tensor and leaves its receiver where it was.
MOVE_METHODS = api.MOVE_METHODS


def move_statement_in(tree: ast.AST, source: str) -> bool:
    """TDL001's ast prefilter: only a move that is a whole expression statement (or an element
    of a tuple that is one) is reported,
    or a whole-statement call of a top-level function of the file that returns a move
    (``to_device(x, device)``: ``CalleeSummary.moves``); ``.to(`` is in most files, such a
    statement in few."""
    called = set()
    for statement in ast_statements(tree):
        if not isinstance(statement, ast.Expr):
            continue
        # (``x.to(device), y.to(device)``: each element's value is discarded too)
        values = statement.value.elts if isinstance(statement.value, ast.Tuple) \
            else [statement.value]
        for value in values:
            if not isinstance(value, ast.Call):
                continue
            func = value.func
            if isinstance(func, ast.Attribute) and func.attr in MOVE_METHODS:
                return True
            if isinstance(func, ast.Name):
                called.add(func.id)
    return bool(called) and any(
        isinstance(node, ast.FunctionDef) and node.name in called and any(
            isinstance(statement, ast.Return) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Attribute)
            and statement.value.func.attr in api.ACCELERATOR_MOVE_METHODS
            for statement in ast_statements(node))
        for node in getattr(tree, "body", ()))


# -- the names the prefilters below look for (the rules import them from here) -----------

# The factory sets (``torch_api``), by the names the prefilters and their rules use.
ALWAYS_SHAPED_FACTORIES = api.ALWAYS_SHAPED_FACTORIES
SIZE_FACTORIES = api.SIZE_FACTORIES
OFF_DEVICE_FACTORIES = api.OFF_DEVICE_FACTORIES
LAYERS_WITH_WEIGHTS = api.LAYERS_WITH_WEIGHTS  # (TDL007: a layer built in ``forward``)
SIZED_FACTORIES = api.SIZED_FACTORIES
SCALAR_FACTORIES = api.SCALAR_FACTORIES
_MOVE_TEXT = method_calls(api.ACCELERATOR_MOVE_METHODS, "DataParallel")
GENERATING = api.GENERATING_FACTORIES  # TDL009 (``rules/factories``)


def off_device_factory_in(tree: ast.AST, source: str) -> bool:
    """TDL007's ast prefilter.

    Every finding is a factory call, or a torch.nn layer with weights built (by any name: a
    superset of what ``qualname`` resolves), without ``device=`` (nor ``**kwargs``, which may
    carry one) in a method of a class that defines ``forward`` (or whose other methods the file calls
    on a name, ``model.sample(n)``), or in a top-level function of a
    file with such a class (``def subsequent_mask(n)``, which ``forward`` may call). The factory is named
    ``<...>.zeros`` or by a name imported from torch (``qualname`` resolves nothing else).
    Most files that name a class and torch have no such call: in torch's nn, optim,
    utils/data and distributions this spares 93 parses of 159.
    """
    walk = _walked(tree)
    with_forward = set()  # the classes with a ``forward`` anywhere inside
    for node in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef):
        if node.name == "forward":
            scope = walk.parents.get(node)
            while scope is not None and scope not in with_forward:
                if type(scope) is ast.ClassDef:
                    with_forward.add(scope)
                scope = walk.parents.get(scope)
    for node in nodes_of(tree, ast.ClassDef):
        # a module class without ``forward`` whose methods the file calls on an instance
        # (``model.get_colors()`` after ``model = Scene().to(device)``: issue 28)
        if node.bases and node not in with_forward and any(
                type(call.func.value) is ast.Name and scope is not node
                and walk.parents.get(scope) is not node
                for method in node.body if type(method) in (ast.FunctionDef, ast.AsyncFunctionDef)
                and not method.name.startswith("__")
                for call, scope in walk.calls_by_name.get(method.name, ())
                if type(call.func) is ast.Attribute):
            with_forward.add(node)
    if not with_forward:
        return False
    # a torch.nn layer with weights built in a method of such a class and called there
    # (``nn.BatchNorm2d(n)(x)``, ``layer = nn.Linear(d, 3)``; ``layer(x)``): no device=
    for name in LAYERS_WITH_WEIGHTS:
        for call, scope in walk.calls_by_name.get(name, ()):
            if any(k.arg in ("device", None) for k in call.keywords):
                continue
            inside, function = scope, None
            while inside is not None and inside not in with_forward:
                if function is None and type(inside) in (ast.FunctionDef, ast.AsyncFunctionDef):
                    function = inside
                inside = walk.parents.get(inside)
            if inside is not None and function is not None and function.name != "__init__":
                return True  # (not where layers belong: ``__init__``, most files' only ones)
    imported = _imported_from_torch(tree, source, OFF_DEVICE_FACTORIES)
    for name in OFF_DEVICE_FACTORIES | imported:
        for call, scope in walk.calls_by_name.get(name, ()):
            func = call.func
            if not ((isinstance(func, ast.Attribute) and func.attr in OFF_DEVICE_FACTORIES)
                    or (isinstance(func, ast.Name) and func.id in imported)):
                continue
            if any(k.arg in ("device", None) for k in call.keywords):
                continue  # (``*sizes`` may follow a size written out: the check decides)
            inside, outer = scope, None
            while inside is not None and inside not in with_forward:
                if type(inside) in (ast.FunctionDef, ast.AsyncFunctionDef):
                    outer = inside
                inside = walk.parents.get(inside)
            if inside is not None:
                return True
            if outer is not None and type(walk.parents.get(outer)) is ast.Module:
                return True  # a top-level function, which ``forward`` may call (issue 28)
    return False


def created_then_moved_in(tree: ast.AST, source: str) -> bool:
    """TDL009's ast prefilter.

    Every finding is a move called on a factory call: ``torch.zeros(3).to(device)`` /
    ``.cuda()``, the factory named ``<...>.zeros`` or by a name imported from torch, or on a
    name bound to one (``tmp = torch.zeros(3)``, ``tmp.to(device)``). The text
    prefilter (``).to(``) also passes on every ``f(x).to(device)``: in torch's own sources
    this spares most of the files it keeps.
    """
    imported = _imported_from_torch(tree, source, GENERATING)

    def is_factory(call) -> bool:
        factory = call.func
        return (isinstance(factory, ast.Attribute) and factory.attr in GENERATING) or \
            (isinstance(factory, ast.Name) and factory.id in imported)

    stored = None  # names bound to a factory's result (``tmp = torch.zeros(3)``, issue 28)
    discarded = None  # moves that are whole statements (``tmp.cuda()`` moves nothing: TDL001's)
    for node in nodes_of(tree, ast.Call):
        if isinstance(node.func, ast.Attribute) and node.func.attr in api.ACCELERATOR_MOVE_METHODS:
            receiver = node.func.value
            if isinstance(receiver, ast.Call) and is_factory(receiver):
                return True
            if isinstance(receiver, ast.Name):
                if stored is None:
                    stored = {target.id for assign in nodes_of(tree, ast.Assign)
                              if isinstance(assign.value, ast.Call) and is_factory(assign.value)
                              for target in assign.targets if isinstance(target, ast.Name)}
                if receiver.id in stored:
                    if discarded is None:
                        discarded = {id(statement.value) for statement in nodes_of(tree, ast.Expr)}
                    if id(node) not in discarded:
                        return True
    return False


def numpy_of_moved_in(tree: ast.AST, source: str) -> bool:
    """TDL008's ast prefilter.

    A finding needs a conversion (``x.numpy()`` with no argument, ``array(x)`` /
    ``asarray(x)``, numpy's ``mean(name)`` and the other readers of a list, of a name or a
    list display: ``np.sum([loss_a, loss_b])``, an item stored into a NumPy allocation:
    ``g_loss[i] = loss`` of ``g_loss = np.zeros(n)``) and evidence,
    somewhere in the file, of a tensor on an accelerator, each
    of which starts at a call: a move (``.cuda()``, ``.to()`` of something other than a CPU
    string; a moved model and a DataParallel wrapper of one need one too) or a ``device=``
    other than a CPU string. The text prefilter (``numpy`` or ``array``, and ``.to(`` or
    ``device``) passes on most of torch; this spares 112 of its files, 25 of them parsed for
    no other rule. A file that converts a name as it is (``y.numpy()``) and another after a
    copy to the host (``x.cpu().numpy()``) may hold twins (``Placement.copied_by_twin``).
    """
    from torchdevlint.project_index import host_copied_name_of
    conversion = evidence = False
    bare = copied = False  # ``y.numpy()`` and ``y.cpu().numpy()`` of names: twin evidence
    numpy_names = None  # (read on the first ``mean(name)``-like call)
    readers = _host_readers(tree, source)  # ``roc_curve``, ``plt``: read through NumPy
    for node in nodes_of(tree, ast.Call):
        func = node.func
        name = _last_name(func)
        if readers and node.args and (
                (isinstance(func, ast.Name) and func.id in readers) or
                (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                 and func.value.id in readers)):
            conversion = True
        if name == "numpy":
            conversion = conversion or (isinstance(func, ast.Attribute) and not node.args
                                        and not node.keywords)
            if isinstance(func, ast.Attribute) and not node.args:
                bare = bare or isinstance(func.value, ast.Name)
                copied = copied or host_copied_name_of(func.value) is not None
                evidence = evidence or (bare and copied)
        elif name in api.NUMPY_CONVERSION_NAMES:
            conversion = conversion or any(not isinstance(a, ast.Starred) for a in node.args)
        elif name in api.NUMPY_ALLOCATION_NAMES and not conversion:
            # ``g_loss = np.zeros(...)`` filled item by item (``g_loss[i] = loss.data``)
            if numpy_names is None:
                numpy_names = _numpy_names(tree)
            conversion = ((isinstance(func, ast.Name) and func.id in numpy_names)
                          or (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                              and func.value.id in numpy_names)) and any(
                isinstance(target, ast.Subscript)
                for store in nodes_of(tree, ast.Assign) for target in store.targets)
        elif (name in api.NUMPY_LIST_READER_NAMES and node.args and
              isinstance(node.args[0], (ast.Name, ast.List, ast.ListComp))) or \
                (name in api.NUMPY_TENSOR_READER_NAMES and node.args):
            # ``np.mean(losses)`` of a list, ``np.argmax(out)`` (``numpy_names``: ``np``,
            # ``from numpy import mean``)
            if numpy_names is None:
                numpy_names = _numpy_names(tree)
            conversion = conversion or (isinstance(func, ast.Name) and func.id in numpy_names) \
                or (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                    and func.value.id in numpy_names)
        evidence = evidence or _moves(node) or any(
            k.arg == "device" and not _cpu_constant(k.value) for k in node.keywords)
        if conversion and evidence:
            return True
    return False


def _numpy_names(tree: ast.AST) -> set:
    """The names bound to numpy (``import numpy as np``) or to a function of it (``from numpy
    import mean``)."""
    found = set()
    for node in nodes_of(tree, ast.Import, ast.ImportFrom):
        for alias in node.names:
            if isinstance(node, ast.Import) and alias.name == "numpy":
                found.add(alias.asname or "numpy")
            elif isinstance(node, ast.ImportFrom) and node.module == "numpy":
                found.add(alias.asname or alias.name)
    return found


def _host_readers(tree: ast.AST, source: str) -> set:
    """The names bound to functions that read their arguments through NumPy
    (``api.reads_host_arrays``: ``from sklearn.metrics import roc_curve``) or to the modules
    that hold them (``import matplotlib.pyplot as plt``), as TDL008 finds them."""
    if "sklearn" not in source and "matplotlib" not in source and "pandas" not in source:
        return set()
    found = set()
    for node in nodes_of(tree, ast.Import, ast.ImportFrom):
        for alias in node.names:
            if isinstance(node, ast.ImportFrom):
                qualified = f"{node.module}.{alias.name}" if node.module else alias.name
                bound = alias.asname or alias.name
            else:
                qualified = alias.name
                bound = alias.asname or alias.name.partition(".")[0]
                if alias.asname is None:
                    continue  # ``import matplotlib.pyplot``: called as a dotted chain
            if qualified in api.HOST_READING_MODULES or api.reads_host_arrays(qualified):
                found.add(bound)
    return found


def _imported_from_torch(tree: ast.AST, source: str, names) -> set:
    """The names bound by ``from torch import NAME [as ALIAS]`` for these ``names``."""
    if not imports_from_torch(source):
        return set()
    return {alias.asname or alias.name for node in nodes_of(tree, ast.ImportFrom)
            if node.module == "torch"
            for alias in node.names if alias.name in names}


def accumulating_loop_in(tree: ast.AST, source: str) -> bool:
    """TDL010's ast prefilter.

    Every finding is an accumulation inside a ``for`` or ``while`` loop: ``+=`` / ``-=``, an
    assignment of a sum or difference, or an ``append``/``extend``/``insert`` statement. Files
    naming a loader have loops, but mostly none accumulating: in torch's utils/data this spares
    9 parses no other default rule makes. In a file that names no loader, only a loop whose
    text names a loss counts (the rule judges a loop over anything but a loader only then):
    without that, 431 more of torch's files would be parsed for TDL010 alone.
    """
    names_a_loader = "loader" in source.lower()
    if not names_a_loader and not _may_judge(source):
        return False  # (no loop's text can name a loss: the walks below would be for nothing)
    lines = holders = accumulating_methods = accumulations = method_calls = None
    for node in nodes_of(tree, ast.For, ast.AsyncFor, ast.While):
        if not names_a_loader:
            # the cheap test first (the loop's whole lines, a superset of its text:
            # ast.get_source_segment splits the whole source at every call, 0.17 s on torch's
            # nn/, optim/, utils/data and distributions/); walking every loop body cost them
            # 0.5 s, +14% of their whole run
            if lines is None:
                lines = source.splitlines()
            text = "\n".join(lines[node.lineno - 1:node.end_lineno])
            if not names_a_loss(text) and not _calls_backward(node, text):
                # the rule also judges a loop by the loss it computes (issue 28): a name the
                # file binds to a loss module, or a parameter a call passes one
                if holders is None:  # (a loss module's class name ends in "Loss")
                    holders = _loss_holders(tree) if "Loss" in source else ()
                if not any(name in text for name in holders):
                    continue
        if accumulations is None:
            accumulations, method_calls = _accumulating_statements(tree)
        # the statements of the loop's lines (its body, and an ``else:`` of it: a superset)
        first, last = node.body[0].lineno, node.end_lineno
        if bisect.bisect_right(accumulations, last) > bisect.bisect_left(accumulations, first):
            return True
        called = {name for line, name in method_calls if first <= line <= last}
        if called:
            # (the file's accumulating methods are looked for only where the loop calls a
            # method as a statement and accumulates no other way: walking every method of
            # every class first was 0.7 s on torch's testing, _dynamo, distributed and nn)
            if accumulating_methods is None:
                accumulating_methods = _accumulating_methods(tree)
            if called & accumulating_methods:
                return True
    return False


def _accumulating_statements(tree: ast.AST):
    """The lines of the file's statements that accumulate (sorted): ``+=`` / ``-=``, an
    assignment of a sum or difference, an ``append``/``extend``/``insert`` statement; and
    [(line, name)] of the other method calls made as statements (``meter.update(loss)``: an
    accumulating method, maybe). Each statement judged once for the file: walking each loop's
    body (nested loops again for each loop around them) was 1.4 s of a profile of torch's
    testing, _dynamo, distributed and nn."""
    lines, calls = [], []
    for node in nodes_of(tree, ast.AugAssign):
        if type(node.op) in (ast.Add, ast.Sub):
            lines.append(node.lineno)
    for node in nodes_of(tree, ast.Assign):
        if any(type(n) is ast.BinOp and type(n.op) in (ast.Add, ast.Sub)
               for n in ast.walk(node.value)):
            lines.append(node.lineno)
    for node in nodes_of(tree, ast.Expr):
        value = node.value
        if type(value) is ast.Call and type(value.func) is ast.Attribute:
            if value.func.attr in ("append", "extend", "insert"):
                lines.append(node.lineno)
            else:
                calls.append((node.lineno, value.func.attr))
    lines.sort()
    return lines, calls


def _accumulating_methods(tree: ast.AST) -> Set[str]:
    """The names of the methods of the file's classes that add into an attribute of their
    object (``def update(self, val, n=1): self.sum += val * n``): a loop calling one
    accumulates (TDL010's ``accumulated_arguments``)."""
    found = set()
    for cls in nodes_of(tree, ast.ClassDef):
        for method in cls.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub))
                    and isinstance(node.target, ast.Attribute) for node in ast.walk(method)):
                found.add(method.name)
    return found


def _may_judge(text: str) -> bool:
    """Whether a text may hold what TDL010 judges a loop over anything but a loader by: a
    loss's name, backward, a functional loss."""
    return names_a_loss(text) or any(call in text for call in api.LOOP_EVIDENCE_CALLS)


def _calls_backward(loop: ast.AST, text: str) -> bool:
    """Whether a loop (whose lines are ``text``) calls backward (``x.backward()``,
    ``torch.autograd.backward``, ``autograd.grad``) or a functional loss named without
    "loss" (``F.cross_entropy``): the word first, then the calls (torch's module.py names its
    ``_backward_hooks`` in loops that call nothing of the kind)."""
    if not any(call in text for call in api.LOOP_EVIDENCE_CALLS):
        return False
    for node in ast.walk(loop):
        if isinstance(node, ast.Call):
            name = _last_name(node.func) or ""
            if name in api.LOOP_EVIDENCE_WORDS or (
                    name == "grad" and "autograd" in ast.unparse(node.func)):
                return True
    return False


def _loss_holders(tree: ast.AST) -> List[str]:
    """The names (and ``self`` attributes' names) the file binds to a loss module (a call of a
    class whose name ends in ``Loss``, ``.to()`` / ``.cuda()`` of one), and the parameters of
    its functions that a call passes one (by position or keyword). A superset of what
    ``Analysis.loss_evidence`` proves by provenance; a name, not a word: ``crit(`` as text."""
    def builds(value) -> bool:
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr in api.MODULE_SELF_METHODS:
            value = value.func.value
        if not isinstance(value, ast.Call):
            return False
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name.endswith("Loss")

    held = set()
    for node in nodes_of(tree, ast.Assign):  # (the shared walk: two walks of their own were
        if builds(node.value):               # a tenth of torch's nn/ lint)
            for target in node.targets:
                if isinstance(target, ast.Name):
                    held.add(target.id)
                elif isinstance(target, ast.Attribute):
                    held.add(target.attr)
    functions = {node.name: node for node in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef)}
    for node in nodes_of(tree, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in functions:
            params = [a.arg for a in functions[node.func.id].args.args]
            for index, arg in enumerate(node.args):
                if index < len(params) and (builds(arg) or getattr(arg, "id", None) in held):
                    held.add(params[index])
            for keyword in node.keywords:
                if keyword.arg and (builds(keyword.value) or getattr(keyword.value, "id", None) in held):
                    held.add(keyword.arg)
    return sorted(held)


def names_a_loss(text: str) -> bool:
    """Whether a loop's text names a loss (``torch_api.LOSS_WORDS``): TDL010 judges a loop
    over anything but a data loader only then."""
    lowered = text.lower()
    return any(word in lowered for word in api.LOSS_WORDS)


def mixed_devices_in(tree: ast.AST, source: str) -> bool:
    """TDL011's ast prefilter.

    Both sides' evidence is found in the body of the function (or the module's code) where
    they meet, each in a call of its own: a CPU tensor made there (a torch factory,
    ``.cpu()``, a ``.to()``) and, there too, a move or a factory's ``device=``, or the call
    of a model moved somewhere in the file. Library code, where tensors are created on
    another tensor's device (``device=x.device``) and ``.to()`` converts dtypes, is skipped
    unparsed.

    It takes as evidence what ``analysis.placement`` may take:
    - ``device=`` counts in a factory's call only (a torch function's other arguments
      follow its tensors; a call of anything else says nothing);
    - ``device=x.device`` and ``.to(x.device)`` follow ``x``, and ``.to(torch.float16)``
      stays put: evidence only where ``x`` has its own, in another call;
    - one call is never both sides' evidence, and neither are two calls whose device is the
      same name: ``Devices.is_cpu_device`` reads all its bindings in the scope, so ``.to(d)``
      moves everywhere or copies to the CPU everywhere;
    - a factory is torch's by the file's imports (``Kinds.qualname`` resolves nothing
      else): ``torch.zeros`` or ``th.zeros``, and a bare name imported from torch under
      any name; a bare ``range(...)``, a function of the file called ``zeros`` or
      ``cutlass.range`` are none;
    - a moved model's output is evidence where a call reaches the model: its own name, or
      a method other than the tensor methods and a module's bookkeeping;
    - the call of an undecorated top-level function that makes a CPU tensor and returns a
      value is CPU evidence where it is called, and one that is given a moved model may
      feed it a CPU tensor (issue 28: ``placement.returned_on_cpu``, ``fed_to_model``). On
      torch's sources this keeps 14 more files, 0.25 MB that no other rule parses in 9.
    On torch's sources it keeps 52 files (123 before these), and the files no other rule
    parses went from 55 (2.1 MB) to 10 (0.4 MB).
    """
    says_cpu = "cpu" in source
    imported = _torch_imports(tree)
    walk = _walked(tree)
    # For each scope, the keys of its calls that may be evidence of each side: a call's
    # own, or the one name that decides which side it is on.
    sides: dict = {}
    for name, sites in walk.calls_by_name.items():
        if name is None or not (name in MOVE_METHODS or name in api.FACTORIES
                                or name.endswith("_like") or name in imported.factories):
            continue  # (most calls: only these names can be evidence)
        for call, scope in sites:
            func = call.func
            if isinstance(func, ast.Name):
                name = imported.factories.get(func.id, "")  # (its name in torch, if it is one)
                factory = bool(name)
            else:
                name = func.attr
                factory = (name in api.FACTORIES or name.endswith("_like")) and \
                    _root_name(func.value) in imported.roots
            if not factory and name not in MOVE_METHODS:
                continue
            devices = [k.value for k in call.keywords if k.arg == "device"]
            if name == "to":
                devices += call.args[:1]
            may_move = name == "cuda" or (name != "cpu" and any(
                not _cpu_constant(d) and not _device_of_value(d, tree) and not _torch_dtype(d)
                for d in devices))
            if factory and not devices:
                # Made on the CPU (a ``*_like`` is where its argument is); 0-dim ones are no
                # evidence, they combine with any device.
                may_copy = not name.endswith("_like") and (
                    not _scalar_made(name, call) or _data_of_unknown_shape(name, call))
            elif factory:
                may_copy = says_cpu and any(map(_may_be_cpu, devices)) and \
                    not _scalar_made(name, call)
            else:
                may_copy = name == "cpu" or (name == "to" and says_cpu
                                             and any(map(_may_be_cpu, devices)))
            if not (may_move or may_copy):
                continue
            key = id(call)
            if len(devices) == 1 and isinstance(devices[0], ast.Name) and \
                    devices[0].id not in walk.rebound.get(scope, ()):
                key = devices[0].id
            moving, copying = sides.get(scope) or sides.setdefault(scope, (set(), set()))
            if may_move:
                moving.add(key)
            if may_copy:
                copying.add(key)
            if moving and copying and (len(moving) > 1 or moving != copying):
                return True
    # A Hugging Face preprocessor asked for torch tensors makes them on the CPU
    # (``tokenizer(text, return_tensors="pt")``: ``placement.returns_torch_tensors``).
    if api.RETURN_TENSORS_KEYWORD in source:
        for sites in walk.calls_by_name.values():
            for call, scope in sites:
                if any(k.arg == api.RETURN_TENSORS_KEYWORD and type(k.value) is ast.Constant
                       and k.value.value == api.RETURN_TENSORS_TORCH for k in call.keywords):
                    moving, copying = sides.get(scope) or sides.setdefault(scope, (set(), set()))
                    copying.add(id(call))
                    if moving:
                        return True
    # An object that is no module keeps its state between its methods (``placement.
    # object_state``: ``self.mat = torch.zeros(n, n)`` in ``__init__``, added to in
    # ``update(target, pred)``): each method of a plain class may hold what any of them made.
    for node in nodes_of(tree, ast.ClassDef):
        if any(not (type(base) is ast.Name and base.id == "object") for base in node.bases):
            continue
        methods = [m for m in node.body if type(m) is ast.FunctionDef]
        pooled = [sides[m] for m in methods if m in sides]
        if not pooled:
            continue
        moving = set().union(*(p[0] for p in pooled))
        copying = set().union(*(p[1] for p in pooled))
        for method in methods:
            own = sides.get(method) or sides.setdefault(method, (set(), set()))
            own[0].update(moving)
            own[1].update(copying)
            if own[0] and own[1] and (len(own[0]) > 1 or own[0] != own[1]):
                return True
    # A method of a class of the file is given its parameters by its calls through instances
    # (``tracker.match(features, labels)``): the evidence of each side where it is called
    # may be its parameters' (``placement.parameters_on_cpu``, issue 28).
    given = {}
    for node in nodes_of(tree, ast.ClassDef):
        for method in node.body:
            if type(method) is ast.FunctionDef and not method.decorator_list and \
                    not method.name.startswith("__"):
                given.setdefault(method.name, []).append(method)
    for name, defined in given.items():
        for call, scope in walk.calls_by_name.get(name, ()):
            caller = sides.get(scope)
            if caller is None or type(call.func) is not ast.Attribute or not call.args:
                continue
            for method in defined:
                moving, copying = sides.get(method) or sides.setdefault(method, (set(), set()))
                moving.update(caller[0])
                copying.update(caller[1])
                if moving and copying and (len(moving) > 1 or moving != copying):
                    return True
    # A function of the module that makes a CPU tensor may return it: its calls (by name)
    # may be CPU evidence where they are (``placement.returned_on_cpu``, issue 28).
    helpers = {scope.name for scope, (_, copying) in sides.items()
               if copying and type(scope) is ast.FunctionDef and not scope.decorator_list
               and walk.parents.get(scope) is tree and _returns_a_value(scope)}
    # So may a method of a class of the file, called on an instance (``model.init_hidden(n)``),
    # and the call of a loss module built with a tensor it keeps (``criterion =
    # nn.CrossEntropyLoss(weight=w)``: ``placement.tensors_held``; issue 28).
    methods = {scope.name for scope, (_, copying) in sides.items()
               if copying and type(scope) is ast.FunctionDef
               and type(walk.parents.get(scope)) is ast.ClassDef and _returns_a_value(scope)}
    losses = _losses_with_tensors(tree) if any(
        name is not None and name.endswith("Loss") for name in walk.calls_by_name) else set()
    for name in helpers | methods | losses:
        for call, scope in walk.calls_by_name.get(name, ()):
            if not ((type(call.func) is ast.Name and name in helpers | losses) or
                    (type(call.func) is ast.Attribute and name in methods)):
                continue
            moving, copying = sides.get(scope) or sides.setdefault(scope, (set(), set()))
            copying.add(id(call))
            if moving:
                return True
    calling_models = [walk.calls.get(scope, ()) for scope, (_, copying) in sides.items() if copying]
    if not calling_models or not _MOVE_TEXT.search(source):
        return False  # a moved model needs a ``.to(`` / ``.cuda(`` or a DDP wrapper
    moved = _moved_names(tree)  # (only for the files that get here)
    # (a function of the module given a moved model may feed it a CPU tensor:
    # ``placement.fed_to_model``)
    functions = {node.name for node in tree.body
                 if type(node) is ast.FunctionDef and not node.decorator_list}
    return any(_calls_model(call, moved, imported.roots) or (
        type(call.func) is ast.Name and call.func.id in functions and (
            any(_model_name(arg) in moved for arg in call.args)
            or any(_model_name(k.value) in moved for k in call.keywords)))
        for calls in calling_models for call in calls)


def _losses_with_tensors(tree: ast.AST) -> set:
    """The names assigned a ``...Loss(...)`` call given a positional argument or a
    ``weight=`` / ``pos_weight=`` (a loss module that may hold a CPU tensor)."""
    names = set()
    for node in nodes_of(tree, ast.Assign):
        value = node.value
        if type(value) is not ast.Call:
            continue
        func = value.func
        callee = func.attr if type(func) is ast.Attribute else \
            func.id if type(func) is ast.Name else ""
        if callee.endswith("Loss") and (value.args or any(
                k.arg in api.LOSS_TENSOR_KEYWORDS for k in value.keywords)):
            names.update(t.id for t in node.targets if type(t) is ast.Name)
    return names


def _returns_a_value(function: ast.FunctionDef) -> bool:
    """Whether a ``return`` with a value is in the function (or in one nested in it)."""
    return any(type(node) is ast.Return and node.value is not None
               for node in ast.walk(function))


# Methods whose call never gives a moved model's output (``placement.call_on_accelerator``
# judges them before it looks for a model).
_NOT_MODEL_OUTPUT = api.TENSOR_METHODS | api.OFF_ACCELERATOR_METHODS | \
    api.MODULE_BOOKKEEPING_METHODS | api.SPLITTING_METHODS


def _calls_model(call: ast.Call, moved: set, torch_roots: set) -> bool:
    """Whether ``call`` may call a model moved to a device (``moved``: ``_moved_names``) or a
    method of one (``model.encode(x)``, ``model.forward(x)``). Models are names and
    attributes of names (``placement.model_key``); torch's own functions are none."""
    func = call.func
    if _root_name(func) in torch_roots:
        return False
    target = func.value if isinstance(func, ast.Attribute) and \
        func.attr in ("forward", "generate") else func
    if _model_name(target) in moved:
        return True
    return isinstance(func, ast.Attribute) and func.attr not in _NOT_MODEL_OUTPUT and \
        _model_name(func.value) in moved


def _may_be_cpu(expr) -> bool:
    """What ``Devices.is_cpu_device`` may take for the CPU: a string, ``torch.device(...)``
    or a name (bound to one of those)."""
    return _cpu_constant(expr) or isinstance(expr, (ast.Name, ast.Call))


def _torch_dtype(expr) -> bool:
    """``torch.float16``: ``.to()`` of it converts, and moves nothing."""
    return isinstance(expr, ast.Attribute) and expr.attr in api.DTYPE_NAMES and \
        isinstance(expr.value, ast.Name) and expr.value.id == "torch"


def _device_of_value(expr, tree: ast.AST) -> bool:
    """``x.device``: wherever ``x`` is. Not ``self.device``, which may be the device an object
    was given (``Placement.follows_a_value(..., proof=True)``), nor ``config.device`` of a name
    the file binds to an instance of one of its classes (``config = Config()``, whose class may
    set it: ``_held_device``)."""
    if not (isinstance(expr, ast.Attribute) and expr.attr == "device"):
        return False
    if not isinstance(expr.value, ast.Name):
        return True
    return expr.value.id != "self" and expr.value.id not in _instance_names(tree)


def _instance_names(tree: ast.AST) -> set:
    """The names the file binds to a call of a class it defines (``config = Config()``)."""
    walk = _walked(tree)
    known = walk.instance_names
    if known is None:
        classes = {node.name for node in nodes_of(tree, ast.ClassDef)}
        known = {target.id for node in nodes_of(tree, ast.Assign)
                 if type(node.value) is ast.Call and type(node.value.func) is ast.Name
                 and node.value.func.id in classes
                 for target in node.targets if type(target) is ast.Name} if classes else set()
        walk.instance_names = known
    return known


class _TorchImports:
    """What a file's imports from torch bind: ``roots``, the names that start torch's
    qualified names (``torch``, ``th`` of ``import torch as th``, ``nn`` of ``from torch
    import nn``), and ``factories``, the names bound to a factory (``from torch import
    zeros as z``: z -> zeros). ``Kinds.qualname`` resolves names through imports only."""

    def __init__(self) -> None:
        self.roots: set = set()
        self.factories: dict = {}


def _torch_imports(tree: ast.AST) -> _TorchImports:
    found = _TorchImports()
    for node in nodes_of(tree, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == "torch":
                found.roots.add(alias.asname or "torch")
    for node in nodes_of(tree, ast.ImportFrom):
        if node.level or (node.module or "").split(".")[0] != "torch":
            if any(alias.name == "*" for alias in node.names):
                found.roots.add("torch")  # (``from models.common import *``: the builder's rule)
            continue
        for alias in node.names:
            bound = alias.asname or alias.name
            found.roots.add(bound)
            if alias.name in api.FACTORIES or alias.name.endswith("_like"):
                found.factories[bound] = alias.name
    return found


def _root_name(expr) -> Optional[str]:
    """``torch`` of ``torch.nn.functional.relu``."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _model_name(expr) -> Optional[str]:
    """The last name of a model expression ``placement.model_key`` knows: ``model``,
    ``self.model``."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        return expr.attr
    return None


def _target_names(target) -> Iterator[str]:
    """The model names an assignment to ``target`` binds (through tuples, not into
    subscripts)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _target_names(element)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)
    else:
        name = _model_name(target)
        if name is not None:
            yield name


def _moved_names(tree: ast.AST) -> set:
    """The last names of everything a model moved to a device may be called by, as
    ``placement.moved_model`` finds them: receivers of a ``.to()`` / ``.cuda()`` whose value is
    thrown away (a module moves in place), what is bound to a call chain holding such a call
    or to a value holding a DataParallel / DDP wrapper, and the parameters of functions (not
    methods) given one of those (three levels deep)."""
    calls = nodes_of(tree, ast.Call)
    moved = {_model_name(call.func.value)
             for statement in nodes_of(tree, ast.Expr) for call in _call_chain(statement.value)
             if _moves(call)}
    bound = [(node.targets, node.value) for node in nodes_of(tree, ast.Assign)]  # (targets, value)
    bound += [([node.target], node.value)
              for node in nodes_of(tree, ast.AnnAssign, ast.AugAssign, ast.NamedExpr) if node.value]
    bound += [([node.target], node.iter) for node in nodes_of(tree, ast.For, ast.AsyncFor)]
    bound += [([node.optional_vars], node.context_expr)
              for node in nodes_of(tree, ast.withitem) if node.optional_vars is not None]
    methods = {id(node) for cls in nodes_of(tree, ast.ClassDef) for node in cls.body}
    functions = {}
    for node in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef):
        if id(node) in methods:
            continue  # (their call sites are not matched: ``_moved_by_every_caller``)
        args = node.args
        functions.setdefault(node.name, set()).update(
            a.arg for a in args.posonlyargs + args.args + args.kwonlyargs)
    for targets, value in bound:
        if any(map(_moves, _call_chain(value))) or any(
                isinstance(call, ast.Call) and (_last_name(call.func) or "")
                .endswith(api.SCATTERING_WRAPPERS)
                for call in ast.walk(value)):
            moved.update(name for target in targets for name in _target_names(target))
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


def _call_chain(expr) -> Iterator[ast.Call]:
    """``Net().to(device).eval()``: the calls of a method chain, outermost first."""
    while isinstance(expr, ast.Call):
        yield expr
        if not isinstance(expr.func, ast.Attribute):
            return
        expr = expr.func.value


def _argument_kind(expr: ast.expr) -> str:
    """``analysis.shapes.argument_kind``, read from Python's ast."""
    if isinstance(expr, (ast.List, ast.Tuple)):
        if not expr.elts:
            return api.EMPTY
        if any(type(e) is ast.Constant and type(e.value) is int and e.value == 0
               for e in expr.elts):
            return api.ZERO_ITEMS
        return api.ITEMS
    if isinstance(expr, ast.ListComp):
        return api.COMPREHENSION
    if type(expr) is ast.Constant and type(expr.value) is int:
        return api.ZERO if expr.value == 0 else api.NUMBER
    if isinstance(expr, (ast.Name, ast.Attribute, ast.BinOp, ast.Call, ast.Subscript)):
        return api.EXPRESSION
    return api.OTHER


def _scalar_made(name: str, call: ast.Call) -> bool:
    """``torch.tensor(1.0)``, ``torch.as_tensor(step)``, ``torch.zeros(())``: a factory that
    may make a 0-dim tensor, by the one answer (``torch_api.factory_dimensions``, which TDL011
    asks through ``analysis.shapes``)."""
    if name not in SCALAR_FACTORIES and name not in SIZED_FACTORIES:
        return False
    return api.factory_dimensions(
        name, [_argument_kind(a) for a in call.args],
        [_argument_kind(k.value) for k in call.keywords if k.arg == "size"]) is False


def _data_of_unknown_shape(name: str, call: ast.Call) -> bool:
    """``torch.from_numpy(obs)``: ``analysis.shapes.data_of_unknown_shape``, read from Python's
    ast. TDL011 takes it for CPU evidence where it is given to a model (a batch, not a
    number)."""
    return name in SCALAR_FACTORIES and bool(call.args) and \
        _argument_kind(call.args[0]) == api.EXPRESSION


def _moves(call: ast.Call) -> bool:
    """``X.cuda()``, ``X.to(...)`` given a device that is no CPU string (``.to(dtype=...)``
    alone moves nothing)."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "type":
        # ``x.type(torch.cuda.FloatTensor)`` or ``x.type(Tensor)`` of a name that may be bound
        # to one (``Placement.device_of_move``); not ``x.type(torch.float16)``
        return bool(call.args) and not _torch_dtype(call.args[0]) and not (
            isinstance(call.args[0], ast.Constant) and "cuda" not in str(call.args[0].value))
    if not isinstance(func, ast.Attribute) or func.attr not in api.ACCELERATOR_MOVE_METHODS:
        return False
    if func.attr == "cuda":
        return True
    devices = call.args[:1] + [k.value for k in call.keywords if k.arg in ("device", None)]
    return any(not _cpu_constant(d) and not _torch_dtype(d) for d in devices)


def _last_name(expr) -> Optional[str]:
    if isinstance(expr, ast.Starred):
        expr = expr.value
    return expr.attr if isinstance(expr, ast.Attribute) else \
        expr.id if isinstance(expr, ast.Name) else None


def _cpu_constant(expr) -> bool:
    return isinstance(expr, ast.Constant) and isinstance(expr.value, str) and "cpu" in expr.value


# -- the rules whose findings sit on one kind of node (TDL002, TDL003, TDL012) -------------
# Before these, a file that only they could report in was parsed by LibCST whenever its text
# named "cuda", "load" or the accelerator, docstrings included; on torch's nn, optim,
# utils/data and distributions that was 26 of 69 parsed files and none reported (see
# benchmarks/prefilter_check.py, which proves on real code that they lose nothing).


def _string_constants_used(tree: ast.AST) -> Iterator[str]:
    """String constants of ``tree`` that can be a value the code uses: not a docstring or
    other bare string statement, not an operand of a comparison (``x.type == "cuda"``,
    ``t in ("cuda", "xpu")``), which only inspects a device."""
    walk = _walked(tree)
    skipped = {id(node.value) for node in walk.by_type.get(ast.Expr, ())}
    for compare in walk.by_type.get(ast.Compare, ()):
        for operand in (compare.left, *compare.comparators):
            skipped.add(id(operand))
            if type(operand) in (ast.Tuple, ast.List, ast.Set):
                skipped.update(id(item) for item in operand.elts)
    for node in walk.by_type.get(ast.Constant, ()):
        if type(node.value) is str and id(node) not in skipped:
            yield node.value


def hardcoded_cuda_in(tree: ast.AST, source: str) -> bool:
    """TDL002's ast prefilter. Every finding is a string ``"cuda"``/``"cuda:N"`` the code
    uses (never a docstring, never a comparison's operand), a ``.cuda(`` call, or a
    ``cuda.XTensor`` type."""
    walk = _walked(tree)
    if any(type(call.func) is ast.Attribute for call, _ in walk.calls_by_name.get("cuda", ())):
        return True
    for node in walk.by_type.get(ast.Attribute, ()):
        value = node.value
        if node.attr.endswith("Tensor") and node.attr[:1].isupper() and (
                (type(value) is ast.Attribute and value.attr == "cuda")
                or (type(value) is ast.Name and value.id == "cuda")):
            return True
    match = api.CUDA_DEVICE_RE.match
    return any(match(text) for text in _string_constants_used(tree))


def _calls_named(tree: ast.AST, names: Sequence[str]) -> bool:
    """A call whose callee's last name is one of ``names`` or an import alias of one
    (``from torch import load as torch_load``): ``Analysis.call_sites``'s candidates."""
    walk = _walked(tree)
    wanted = set(names)
    for node in walk.by_type.get(ast.ImportFrom, ()):
        wanted.update(alias.asname for alias in node.names
                      if alias.asname and alias.name in names)
    by_name = walk.calls_by_name
    return any(name in by_name for name in wanted)


def unmapped_load_in(tree: ast.AST, source: str) -> bool:
    """TDL003's test: a call of a load function (``api.LOAD_CALL_NAMES``, or an import alias
    of one) reached through an import of torch (``torch.load``, ``th.jit.load``, ``from
    torch.hub import load_state_dict_from_url``) that passes no ``map_location=`` and no
    ``*args``/``**kwargs``: what ``Analysis.call_sites`` and the rule ask, without LibCST. Of
    torch's 2,284 files, 59 were parsed for TDL003 alone, 16 of them for calls such as
    ``json.load(f)`` or ``torch.load(f, map_location=...)`` (issue 28's cost budget)."""
    walk = _walked(tree)
    roots = _torch_imports(tree).roots
    wanted = set(api.LOAD_CALL_NAMES)
    for node in walk.by_type.get(ast.ImportFrom, ()):
        wanted.update(alias.asname for alias in node.names
                      if alias.asname and alias.name in api.LOAD_CALL_NAMES)
    for name in wanted:
        for call, _ in walk.calls_by_name.get(name, ()):
            if _root_name(call.func) in roots and not any(
                    k.arg is None or k.arg == "map_location" for k in call.keywords) \
                    and not any(isinstance(a, ast.Starred) for a in call.args):
                return True
    return False


def has_ast_prefilter(rule) -> bool:
    """Whether a rule (or its ``RuleInfo``) has an ast prefilter: declared calls, a test, or
    both."""
    return bool(rule.required_calls) or rule.could_report_in is not None


def passes_ast_prefilter(rule, tree: ast.AST, source: str) -> bool:
    """A rule's ast prefilter: one of its declared ``required_calls`` is called (in the shared
    walk's calls by name), then its finer ``could_report_in``, if it has one."""
    if rule.required_calls and not _calls_named(tree, rule.required_calls):
        return False
    return rule.could_report_in is None or rule.could_report_in(tree, source)


def _is_current_accelerator_call(node) -> bool:
    if type(node) is ast.NamedExpr:
        node = node.value
    return type(node) is ast.Call and _last_name(node.func) == "current_accelerator"


def current_accelerator_read_in(tree: ast.AST, source: str) -> bool:
    """TDL012's ast prefilter: every finding is an attribute read of a
    ``current_accelerator()`` call's value: of the call itself (also through ``:=``), or of
    a name some assignment binds to such a call (the analysis's ``accelerator_reads``)."""
    walk = _walked(tree)  # (a current_accelerator() call: TDL012's declared required_calls)
    names = set()
    for node in walk.by_type.get(ast.Assign, ()):
        if _is_current_accelerator_call(node.value):
            names.update(t.id for t in node.targets if type(t) is ast.Name)
    for node in walk.by_type.get(ast.NamedExpr, ()):
        if _is_current_accelerator_call(node.value) and type(node.target) is ast.Name:
            names.add(node.target.id)
    for node in walk.by_type.get(ast.Attribute, ()):
        value = node.value
        if _is_current_accelerator_call(value) or (type(value) is ast.Name and value.id in names):
            return True
    return False
