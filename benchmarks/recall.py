"""Recall benchmark: plant one device bug at a time in correct code and see what is caught.

    python benchmarks/recall.py PATH [PATH ...] [--jobs N] [--kinds TDL001,TDL004]
                                [--show-missed N] [--json out.json]
                                [--seed S] [--limit-per-kind N]

The precision side of torchdevlint is measured on real code as it is; recall needs bugs whose
location is known. This script makes them: it reads correct code (your project, or any
checkout), finds every place where one of six mutations applies, writes each mutant (the
file with exactly one bug planted) in memory, lints it, and reports per rule how many of
the planted bugs were caught. Nothing is written to disk; your files are only read.

The six mutations (one per rule; the *shape* names the variant, shown in the report):

TDL001 (discarded move)
    ``x = x.to(device)`` / ``x = x.cuda()`` / ``x = x.cpu()`` (also ``self.x = self.x.to(d)``)
    becomes the bare statement ``x.to(device)``. Not planted where the bare call would not be
    a bug (shown as *skipped*): a receiver whose name or constructor says it is an
    ``nn.Module`` (``model``, ``net``, ``encoder``, ``x = Net(...)``), the output of a
    tokenizer or processor (``BatchEncoding.to()`` moves in place), a whole loader item that
    is not unpacked (a PyG ``Batch`` or a ``BatchEncoding``, both moved in place), and, in a
    notebook, a statement that would become the value Jupyter displays.
TDL002 (hard-coded CUDA)
    a device chosen at runtime becomes ``"cuda"``: the conditional expression
    ``"cuda" if torch.cuda.is_available() else "cpu"`` (or ``torch.device("cuda:0") if
    use_cuda else ...``, ``x.cuda() if args.cuda else x``) becomes its CUDA branch; a
    ``device = ...`` assignment whose value mentions ``torch.cuda.is_available()`` (and holds
    no such expression) gets ``"cuda"`` (or ``torch.device("cuda")``) as its whole value.
    Skipped inside a block that is itself guarded by a CUDA test.
TDL003 (torch.load without map_location)
    ``map_location=...`` (or the positional argument in its place) is removed from a call of
    ``torch.load``, ``torch.jit.load``, ``torch.hub.load_state_dict_from_url`` or
    ``torch.utils.model_zoo.load_url``, through any import form. Skipped for a load that
    follows a ``torch.save`` to the same target in the same function (a round trip).
TDL004 (unmoved batch)
    in a ``for`` loop over something loader-like (its iterable mentions ``loader`` or ``dl``),
    the statement that moves a batch value is deleted (``x = x.to(device)``, ``x, y =
    x.to(device), y.to(device)``, ``batch = {k: v.to(device) for ...}``, ``batch =
    move_to(batch, device)``; replaced by ``pass`` when it was the only statement of its
    block), or the move is stripped from an expression (``model(x.to(device))`` becomes
    ``model(x)``, ``x = batch[0].to(device)`` becomes ``x = batch[0]``). Batch values are
    the loop targets and the names unpacked from them in the loop body.

TDL005 (unregistered tensor attribute)
    ``self.register_buffer("mask", value)`` (a whole statement in a method) becomes
    ``self.mask = value``. Skipped for ``None``, for a value created with ``device=`` and for
    a 0-dim ``torch.tensor(<number>)``, which are no bug as plain attributes.
TDL006 (unregistered submodule container)
    ``self.blocks = nn.ModuleList([...])`` (a list, tuple, comprehension or nothing) becomes
    ``self.blocks = [...]``, and ``nn.ModuleDict({...})`` becomes the dict. Other planted
    TDL005/TDL006 bugs that are no bug (a buffer used only as an index, a list never used) stay
    in the count: these figures are lower bounds.

TDL008 (numpy of a device tensor)
    the copy to the host is removed before a conversion to NumPy: ``x.cpu().numpy()`` becomes
    ``x.numpy()`` (also ``x.detach().cpu().numpy()`` -> ``x.detach().numpy()``), and
    ``np.asarray(x.cpu())`` / ``np.array(x.cpu())`` becomes ``np.asarray(x)``. Code that never
    had ``x`` on an accelerator (a CPU-only script converting with a habitual ``.cpu()``) gets
    a mutant that is no bug: the figure is a lower bound.

A mutant is *caught* when linting it gives a finding of the planted rule that linting the
original file did not give. Findings are compared as (code, line, message) multisets, with
lines after the edit shifted back by the lines the edit added or removed (and every line of
the edited span counted as one place), so a finding the file already had never counts.

Counting: the same code is often copied (the training loop of ten example scripts); it would
be counted ten times. Each mutant therefore has a *snippet*: the enclosing function (at
module level, the 15 lines before and 5 after the edit) before and after the mutation,
whitespace-normalised. Mutants with the same rule and snippet are one *distinct mutation*,
in one file (``per-file distinct``) and across files (``distinct``: the headline figure).
A distinct mutation counts as caught only when every copy of it is caught; ``partly`` counts
the ones caught in some copies only (their context elsewhere in the file differs).

Linting is the library's own (``torchdevlint.engine.lint_source``), in-process, with every rule
selected, no configuration file (as ``--isolated``) and ``# noqa`` comments not applied, so
the figure measures the analysis. Notebooks (``*.ipynb``) are mutated and linted as one
program, the way ``torchdevlint`` lints them. Directories are searched as ``torchdevlint``
searches them (default excludes, ``.gitignore``).

Options: ``--jobs N`` lints in N processes; ``--kinds`` picks the mutation kinds (rule
codes); ``--show-missed N`` prints N missed mutations per rule (file:line, shape, snippet
before -> after, and hints about the mutated value) to see what the analysis misses;
``--json FILE`` writes every mutant with its result; ``--limit-per-kind N`` samples N
distinct mutations per rule (with ``--seed``) for a quick run. Exit code 0, or 2 for a
usage error.
"""

from __future__ import annotations

import argparse
import bisect
import dataclasses
import hashlib
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import libcst as cst  # noqa: E402
from libcst.metadata import MetadataWrapper, PositionProvider  # noqa: E402

from torchdevlint.config import Resolver  # noqa: E402
from torchdevlint.engine import gc_paused, lint_source  # noqa: E402
from torchdevlint.notebook import (SUFFIX as NOTEBOOK_SUFFIX, NotebookError,  # noqa: E402
                                   displayed_filter, is_python_notebook, parse_notebook)
from torchdevlint.positions import line_starts  # noqa: E402
from torchdevlint.rules import ALL_RULES  # noqa: E402
from torchdevlint.runner import UsageError, display_path, iter_python_files  # noqa: E402
from torchdevlint.source import SourceError, decode_source  # noqa: E402

KINDS = ("TDL001", "TDL002", "TDL003", "TDL004", "TDL005", "TDL006", "TDL008")
CONTEXT_BEFORE, CONTEXT_AFTER = 15, 5  # module-level snippet: lines around the edit
MUTANTS_PER_TASK = 16  # a lint task: one file's original and up to this many mutants

# -- recognising things in source -------------------------------------------------------------

_MOVE_METHODS = ("to", "cuda", "cpu")
_LOADER_ITER = re.compile(r"(?i)loader|(?<![A-Za-z0-9])dl(?![A-Za-z0-9])|_dl\b|\bdl_")
_DTYPE_TEXT = re.compile(
    r"dtype|memory_format|\btorch\.(float|half|bfloat|double|int|long|bool|uint|complex|cfloat"
    r"|cdouble|short|qint|quint|chalf)\w*$")
_CPU_TEXT = re.compile(r"""^(?:torch\.device\(\s*)?['"](cpu|meta)['"]\)?$""")
_CUDA_LITERAL = re.compile(r"""^[rRuU]?['"]cuda(:\d+)?['"]$""")
_GUARD_TEST = re.compile(r"(?i)cuda|gpu|is_available|device_count")
_STRING = re.compile(r"""[rRbBuUfF]*(['"])(?:\\.|(?!\1).)*\1""")
_CPU_BRANCH = re.compile(r"""['"](cpu|mps|xpu)['"]""")
# Receivers whose bare .to() is not a bug: modules (moved in place) and BatchEncodings.
_MODULE_NAME = re.compile(
    r"(?i)model|(?:^|_)net(?:$|_|\d)|^net|net$|module|encoder|decoder|generator|discriminator"
    r"|classifier|criterion|backbone|^(g|d|g_\w+|d_\w+|vae|unet|ema|head|layer|block|policy"
    r"|critic|actor|teacher|student|loss_fn|lossfn|loss_func|metric\w*)$")
_CAMEL = re.compile(r"^_?[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$")
_TENSOR_CONSTRUCTORS = frozenset(
    "Tensor FloatTensor DoubleTensor HalfTensor BFloat16Tensor ByteTensor CharTensor "
    "ShortTensor IntTensor LongTensor BoolTensor Parameter Variable".split())
_ENCODING_CALL = re.compile(r"(?i)tokeni[sz]er|processor|feature_extractor|encode_plus|collator"
                            r"|image_processor")
_MODULE_CALL = re.compile(r"(?:^|\.)(from_pretrained|from_config|compile|DataParallel"
                          r"|DistributedDataParallel|create_model|build_model|load_model"
                          r"|get_model|Sequential)$|^(?:nn|torch\.nn)\.(?!functional|init|utils)"
                          r"|^(?:models|torchvision\.models|timm)\.")

# Callees a batch value may be passed to without being on the model's device.
_NOT_A_SINK = re.compile(
    r"(?:^|\.)(append|extend|add|insert|update|put|print|log\w*|info|debug|write|save|len"
    r"|isinstance|str|repr|format|list|tuple|dict|set|range|enumerate|zip|item|size|numel"
    r"|to|cuda|cpu|numpy|tolist|extend|copy_|all_gather\w*|gather|broadcast|barrier"
    r"|(?:torch\.)?(?:empty|zeros|ones|full|arange|randn|rand|randint|tensor|as_tensor)(?:_like)?)$"
    r"|^(np|numpy|torch\.distributed|dist|os|json|pickle|logging|logger|wandb|writer)\.")

# The load functions of TDL003 and where their map_location goes positionally.
_LOADS = {"torch.load": 1, "torch.serialization.load": 1, "torch.jit.load": 1,
          "torch.hub.load_state_dict_from_url": 2, "torch.utils.model_zoo.load_url": 2}


def _norm(text: str) -> str:
    return " ".join(text.split())


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _dotted(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        owner = _dotted(node.value)
        return f"{owner}.{node.attr.value}" if owner else None
    return None


def _root_name(node: cst.BaseExpression) -> Optional[str]:
    """The name an expression is built on: ``x`` for ``x``, ``x[0]``, ``x.a``, ``x.float()``."""
    while True:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        elif isinstance(node, cst.Call):
            node = node.func
        else:
            return None


def _move_call(node: cst.BaseExpression) -> Optional[str]:
    """``to``/``cuda``/``cpu`` when ``node`` is such a method call, else None."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in _MOVE_METHODS:
        return node.func.attr.value
    return None


def _device_like(expr: cst.BaseExpression) -> bool:
    text = _norm(_code(expr))
    return not (_DTYPE_TEXT.search(text) or _CPU_TEXT.match(text))


def _moves_to_device(call: cst.Call, allow_cpu: bool = False) -> bool:
    """``.to(<a device>)``, ``.cuda(...)`` (and, with ``allow_cpu``, ``.cpu()``)."""
    method = _move_call(call)
    if method == "cuda":
        return True
    if method == "cpu":
        return allow_cpu and not call.args
    if method != "to" or not call.args or any(a.star for a in call.args):
        return False
    for arg in call.args:
        if arg.keyword is None:
            return _device_like(arg.value)
        if arg.keyword.value == "device":
            return _device_like(arg.value)
    return False


def _is_cuda_device(expr: cst.BaseExpression) -> bool:
    """A hard CUDA device: ``"cuda"``, ``"cuda:0"``, ``torch.device("cuda", ...)``, ``x.cuda()``."""
    if isinstance(expr, cst.SimpleString):
        return bool(_CUDA_LITERAL.match(expr.value))
    if isinstance(expr, cst.Call):
        if _move_call(expr) == "cuda":
            return True
        if _dotted(expr.func) in ("torch.device", "device") and expr.args \
                and expr.args[0].keyword is None:
            return _is_cuda_device(expr.args[0].value)
    return False


def _names_in_target(target: cst.BaseExpression) -> List[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names_in_target(e.value)]
    if isinstance(target, cst.StarredElement):
        return _names_in_target(target.value)
    return []


# -- mutations ---------------------------------------------------------------------------------


@dataclass
class Mutation:
    kind: str
    shape: str
    path: str
    start: int  # the edit: program[start:end] becomes replacement
    end: int
    replacement: str
    line: int  # program lines (1-based) of the replaced text
    end_line: int
    location: str  # path:line, or path:cell N:line for notebooks
    before: str  # the mutated statement, before and after (whitespace-normalised)
    after: str
    snippet: str = ""  # hash of the kind and the enclosing snippet before and after
    skip: Optional[str] = None  # why this mutant would not be a bug (not linted)
    hints: Dict[str, str] = field(default_factory=dict)
    # filled in by linting:
    caught: Optional[bool] = None
    new_codes: List[str] = field(default_factory=list)
    error: Optional[str] = None

    @property
    def file_key(self) -> tuple:
        return (self.kind, self.path, self.snippet)

    @property
    def text_key(self) -> tuple:
        return (self.kind, self.snippet)


@dataclass
class _Scope:
    node: Optional[cst.CSTNode]  # FunctionDef, or None for the module
    params: Dict[str, Optional[str]] = field(default_factory=dict)  # name -> annotation
    # name (or dotted target) -> [(line, value node)] assignments, in order
    assigned: Dict[str, List[tuple]] = field(default_factory=lambda: defaultdict(list))
    saves: List[tuple] = field(default_factory=list)  # (target, offset) of torch.save(obj, target)


class _Finder(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, source: str, path: str, kinds: Sequence[str], notebook=None) -> None:
        super().__init__()
        self.source = source
        self.path = path
        self.kinds = set(kinds)
        self.notebook = notebook
        self.starts = line_starts(source)
        self.stack: List[cst.CSTNode] = []
        self.scopes: List[_Scope] = [_Scope(None)]
        self.all_scopes: List[_Scope] = [self.scopes[0]]
        self.aliases: Dict[str, str] = {}  # local name -> dotted torch name
        self.file_bindings: Dict[str, List[cst.BaseExpression]] = defaultdict(list)
        self.mutations: List[Mutation] = []
        self.loads: List[tuple] = []  # TDL003 candidates, decided after the walk
        self.device_assigns: List[tuple] = []  # TDL002 assignment candidates, likewise
        self.loops: List[tuple] = []  # (For node, batch names) of loader loops, innermost last
        self.tdl004_done: set = set()
        self.last_in_cell: set = set()  # module statements Jupyter would display the value of
        self.uses_pyg = "torch_geometric" in source

    # -- positions and edits

    def offset(self, position) -> int:
        return self.starts[position.line - 1] + position.column

    def span(self, node: cst.CSTNode) -> Tuple[int, int]:
        rng = self.get_metadata(PositionProvider, node)
        return self.offset(rng.start), self.offset(rng.end)

    def text(self, node: cst.CSTNode) -> str:
        start, end = self.span(node)
        return self.source[start:end]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def where(self, line: int) -> str:
        if self.notebook is not None:
            cell, cell_line = self.notebook.locate(line)
            return f"{self.path}:cell {cell}:{cell_line}"
        return f"{self.path}:{line}"

    def add(self, kind: str, shape: str, start: int, end: int, replacement: str,
            statement: Optional[cst.CSTNode] = None, skip: Optional[str] = None,
            hints: Optional[dict] = None) -> None:
        line = self.line_of(start)
        end_line = self.line_of(max(start, end - 1)) if end > start else line
        stmt_start, stmt_end = self.span(statement) if statement is not None else (start, end)
        stmt_start, stmt_end = min(stmt_start, start), max(stmt_end, end)
        before = self.source[stmt_start:stmt_end]
        after = self.source[stmt_start:start] + replacement + self.source[end:stmt_end]
        ctx_start, ctx_end = self._context(start, end)
        ctx_before = self.source[ctx_start:ctx_end]
        ctx_after = self.source[ctx_start:start] + replacement + self.source[end:ctx_end]
        digest = hashlib.sha1("\0".join((kind, _snippet_norm(ctx_before),
                                         _snippet_norm(ctx_after))).encode()).hexdigest()
        self.mutations.append(Mutation(
            kind, shape, self.path, start, end, replacement, line, end_line, self.where(line),
            _norm(before), _norm(after) or "(deleted)", digest[:16], skip, dict(hints or {})))

    def _context(self, start: int, end: int) -> Tuple[int, int]:
        for node in reversed(self.stack):
            if isinstance(node, cst.FunctionDef):
                return self.span(node)
        first = max(1, self.line_of(start) - CONTEXT_BEFORE)
        last = min(len(self.starts), self.line_of(end) + CONTEXT_AFTER)
        stop = self.starts[last] if last < len(self.starts) else len(self.source)
        return self.starts[first - 1], stop

    # -- the walk

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.stack.append(node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        self.stack.pop()

    def visit_Module(self, node: cst.Module) -> None:
        if self.notebook is None:
            return
        # The last statement of each cell: a bare expression there is displayed, not dropped.
        cells = []
        for statement in node.body:
            line = self.get_metadata(PositionProvider, statement).start.line
            cells.append((self.notebook.locate(line)[0], statement))
        for (cell, statement), following in zip(cells, cells[1:] + [(None, None)]):
            if following[0] != cell:
                self.last_in_cell.add(id(statement))

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = _dotted(alias.name)
            if name and (name == "torch" or name.startswith("torch.")):
                if alias.asname is not None:
                    self.aliases[alias.asname.name.value] = name
                else:
                    self.aliases.setdefault("torch", "torch")

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = _dotted(node.module) if node.module is not None and not node.relative else None
        if not module or not (module == "torch" or module.startswith("torch.")) \
                or isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            local = alias.asname.name.value if alias.asname is not None else alias.name.value
            self.aliases[local] = f"{module}.{alias.name.value}"

    def qualname(self, func: cst.BaseExpression) -> Optional[str]:
        dotted = _dotted(func)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        full = self.aliases.get(head, "torch" if head == "torch" else None)
        if full is None:
            return None
        return f"{full}.{rest}" if rest else full

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scope = _Scope(node)
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params,
                      *([params.star_arg] if isinstance(params.star_arg, cst.Param) else []),
                      *([params.star_kwarg] if params.star_kwarg else [])):
            scope.params[param.name.value] = (_norm(_code(param.annotation.annotation))
                                              if param.annotation else None)
        self.scopes.append(scope)
        self.all_scopes.append(scope)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()

    def _record_binding(self, target: cst.BaseExpression, value: Optional[cst.BaseExpression],
                        line: int) -> None:
        key = _dotted(target)
        if key is not None:
            self.scopes[-1].assigned[key].append((line, value))
            self.file_bindings[key].append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) and \
                len(value.elements) == len(target.elements) else None
            for i, element in enumerate(target.elements):
                self._record_binding(element.value, values[i].value if values else None, line)

    def visit_Assign(self, node: cst.Assign) -> None:
        line = self.get_metadata(PositionProvider, node).start.line
        for target in node.targets:
            self._record_binding(target.target, node.value, line)
        if "TDL001" in self.kinds:
            self._tdl001(node)
        if "TDL002" in self.kinds:
            self._device_assign(node, node.targets[0].target if len(node.targets) == 1 else None)
        if "TDL004" in self.kinds and self.loops:
            self._tdl004_statement(node)
        if "TDL006" in self.kinds:
            self._tdl006(node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            line = self.get_metadata(PositionProvider, node).start.line
            self._record_binding(node.target, node.value, line)
            if "TDL002" in self.kinds:
                self._device_assign(node, node.target)

    def visit_For(self, node: cst.For) -> None:
        line = self.get_metadata(PositionProvider, node).start.line
        self._record_binding(node.target, None, line)
        if "TDL004" in self.kinds and _LOADER_ITER.search(_code(node.iter)):
            self.loops.append((node, set(_names_in_target(node.target))))

    def leave_For(self, original_node: cst.For) -> None:
        if self.loops and self.loops[-1][0] is original_node:
            self.loops.pop()

    def visit_Call(self, node: cst.Call) -> None:
        if "TDL003" in self.kinds:
            self._tdl003(node)
        if "TDL005" in self.kinds:
            self._tdl005(node)
        if "TDL004" in self.kinds and self.loops:
            self._tdl004_strip(node)
        if "TDL008" in self.kinds:
            self._tdl008(node)

    # -- TDL008: `x.cpu().numpy()` -> `x.numpy()`, `np.asarray(x.cpu())` -> `np.asarray(x)`

    def _tdl008(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "numpy" and not node.args:
            copy, shape = func.value, "numpy"
        elif (_dotted(func) or "").rsplit(".", 1)[-1] in ("array", "asarray") and node.args \
                and node.args[0].keyword is None:
            copy, shape = node.args[0].value, "np." + (_dotted(func) or "").rsplit(".", 1)[-1]
        else:
            return
        if not (isinstance(copy, cst.Call) and isinstance(copy.func, cst.Attribute)
                and copy.func.attr.value == "cpu" and not copy.args):
            return
        start, end = self.span(copy)
        self.add("TDL008", shape, start, end, self.text(copy.func.value), node)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        if "TDL002" in self.kinds:
            self._tdl002_ifexp(node)

    def leave_Module(self, original_node: cst.Module) -> None:
        self._decide_loads()
        self._decide_device_assigns()

    # -- TDL005: `self.register_buffer("mask", value)` -> `self.mask = value`

    def _tdl005(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "register_buffer"
                and isinstance(func.value, cst.Name)) or any(a.star for a in node.args):
            return
        statement = self._statement()
        if not isinstance(statement, cst.Expr) or statement.value is not node \
                or not any(isinstance(n, cst.FunctionDef) for n in self.stack):
            return  # only a whole statement in a method becomes an assignment
        positional = [a.value for a in node.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        name = positional[0] if positional else keywords.get("name")
        value = positional[1] if len(positional) > 1 else keywords.get("tensor")
        if not isinstance(name, cst.SimpleString) or value is None:
            return
        attribute = name.evaluated_value
        if not isinstance(attribute, str) or not attribute.isidentifier():
            return
        skip = None
        value_text = self.text(value)
        if _norm(value_text) == "None":
            skip = "a buffer of None holds no tensor"
        elif re.search(r"\bdevice\s*=", value_text):
            skip = "created with device=: it may already be on the device"
        elif re.fullmatch(r"torch\.(tensor|as_tensor)\(\s*-?[\d.e+-]+\s*(,.*)?\)", _norm(value_text)):
            skip = "a 0-dim tensor combines with tensors on any device"
        start, end = self.span(node)
        self.add("TDL005", "register_buffer", start, end,
                 f"{func.value.value}.{attribute} = {value_text}", statement, skip=skip)

    # -- TDL006: `self.blocks = nn.ModuleList([...])` -> `self.blocks = [...]`

    def _tdl006(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.value, cst.Call):
            return
        target = node.targets[0].target
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
            return
        call = node.value
        container = (_dotted(call.func) or "").rsplit(".", 1)[-1]
        if container not in ("ModuleList", "ModuleDict") or any(a.star or a.keyword for a in call.args):
            return
        if not any(isinstance(n, cst.FunctionDef) for n in self.stack):
            return
        if not call.args:
            replacement = "[]" if container == "ModuleList" else "{}"
        else:
            argument = call.args[0].value
            if container == "ModuleList" and isinstance(argument, (cst.List, cst.ListComp, cst.Tuple)):
                replacement = self.text(argument)
            elif container == "ModuleList" and isinstance(argument, cst.GeneratorExp):
                replacement = "[" + self.text(argument).strip("()") + "]" if argument.lpar else \
                    "[" + self.text(argument) + "]"
            elif container == "ModuleDict" and isinstance(argument, (cst.Dict, cst.DictComp)):
                replacement = self.text(argument)
            else:
                return  # ModuleList(layers): the plain value is a name, not a container here
        start, end = self.span(call)
        self.add("TDL006", container, start, end, replacement, node)

    # -- TDL001: `x = x.to(device)` -> `x.to(device)`

    def _tdl001(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.value, cst.Call):
            return
        target = node.targets[0].target
        method = _move_call(node.value)
        if method is None or not _moves_to_device(node.value, allow_cpu=True):
            return
        receiver = node.value.func.value
        target_text = _dotted(target)
        if target_text is None or _dotted(receiver) != target_text:
            return
        start, end = self.span(node)
        value_start, value_end = self.span(node.value)
        origin = self._origin(target_text, self.line_of(start))
        scope = self.scopes[-1]
        bound = len(scope.assigned.get(target_text, ())) + (target_text in scope.params)
        hints = {"receiver": target_text, "origin": origin, "method": method,
                 "bindings_in_scope": str(bound)}
        skip = self._not_a_tensor(target_text, start)
        if skip is None and self.notebook is not None and len(self.stack) >= 2 \
                and id(self.stack[-2]) in self.last_in_cell and len(self.stack) == 3:
            skip = "notebook: the bare call would be the cell's displayed value"
        shape = "attribute" if isinstance(target, cst.Attribute) else "name"
        self.add("TDL001", f"{shape}.{method}", start, end,
                 self.source[value_start:value_end], node, skip, hints)

    def _not_a_tensor(self, target: str, offset: int) -> Optional[str]:
        parts = target.split(".")
        if _MODULE_NAME.search(parts[-1]):
            return "receiver is named like an nn.Module (moved in place)"
        if any(_MODULE_NAME.search(part) for part in parts[1 if parts[0] == "self" else 0:-1]):
            return "receiver is an attribute of a module (likely a submodule)"
        if self.uses_pyg and re.search(r"(?i)^(\w+_)?(data|graph)$", parts[-1]):
            return "receiver is likely a PyG Data/Batch (Data.to() moves in place)"
        for value in self.file_bindings.get(target, ()):
            if isinstance(value, cst.Call):
                callee = _dotted(value.func) or ""
                tail = callee.rsplit(".", 1)[-1]
                if _ENCODING_CALL.search(_code(value.func)):
                    return "receiver is a tokenizer/processor output (BatchEncoding.to() is in place)"
                if (_CAMEL.match(tail) and tail not in _TENSOR_CONSTRUCTORS) \
                        or _MODULE_CALL.search(callee):
                    return "receiver is built by a class or model factory (likely an nn.Module " \
                           "or another object whose .to() may work in place)"
        for loop in reversed(self.stack):
            if not isinstance(loop, cst.For) or not _LOADER_ITER.search(_code(loop.iter)):
                continue
            item = loop.target
            # ``for i, batch in enumerate(loader)``: the item is the second name
            if isinstance(item, cst.Tuple) and len(item.elements) == 2 \
                    and isinstance(loop.iter, cst.Call) and _dotted(loop.iter.func) == "enumerate":
                item = item.elements[1].value
            if isinstance(item, cst.Name) and item.value == target:
                return "receiver is a whole loader item (a PyG Batch/BatchEncoding moves in place)"
        return None

    def _origin(self, target: str, line: int) -> str:
        """Where the mutated receiver comes from, as a hint for reading missed mutants."""
        head = target.split(".", 1)[0]
        for scope in reversed(self.scopes):
            earlier = [(at, v) for at, v in scope.assigned.get(target, ()) if at < line]
            if earlier:
                value = earlier[-1][1]
                if value is None:
                    return "for-loop target / unpacked"
                if isinstance(value, cst.Call):
                    return f"assigned from call `{_norm(_code(value.func))[:60]}(...)`"
                return f"assigned `{_norm(_code(value))[:60]}`"
            if head == "self" and scope.node is not None and "self" in scope.params:
                return "self attribute"
            if head in scope.params:
                annotation = scope.params[head]
                return f"parameter annotated `{annotation}`" if annotation else \
                    "unannotated parameter"
        if any(isinstance(n, cst.With) for n in self.stack):
            return "unknown (with-statement / enclosing scope)"
        return "unknown (global, import, or enclosing scope)"

    # -- TDL002: a guarded device -> "cuda"

    def _guarded_already(self) -> bool:
        for parent, child in zip(self.stack, self.stack[1:]):
            if isinstance(parent, (cst.If, cst.While)) and child is parent.body \
                    and _GUARD_TEST.search(_code(parent.test)):
                return True
            if isinstance(parent, (cst.FunctionDef, cst.ClassDef)) \
                    and re.search(r"(?i)cuda|gpu", parent.name.value):
                return True
        return False

    def _tdl002_ifexp(self, node: cst.IfExp) -> None:
        body_cuda, orelse_cuda = _is_cuda_device(node.body), _is_cuda_device(node.orelse)
        if body_cuda == orelse_cuda:
            return
        branch, other = (node.body, node.orelse) if body_cuda else (node.orelse, node.body)
        # The test must ask whether CUDA is there (or is an opt-in flag), not inspect a
        # device chosen elsewhere (`"cuda" if "cuda" in device else "cpu"`).
        test = _code(node.test)
        if re.search(r"""['"]cuda""", test):
            return
        if not (_GUARD_TEST.search(_STRING.sub("", test)) or _CPU_BRANCH.search(_code(other))):
            return
        start, end = self.span(node)
        statement = self._statement()
        skip = "already inside a CUDA-guarded block" if self._guarded_already() else None
        shape = "cuda-call" if _move_call(branch) == "cuda" else (
            "torch.device" if isinstance(branch, cst.Call) else "literal")
        hints = {"test": _norm(_code(node.test))[:80], "where": self._where_used(node)}
        self.add("TDL002", f"ifexp.{shape}", start, end, self.text(branch), statement, skip, hints)

    def _where_used(self, node: cst.CSTNode) -> str:
        """How the chosen device is used: assigned to a name, an argument, ..."""
        for parent in reversed(self.stack[:-1]):
            if isinstance(parent, cst.Arg):
                return f"argument{' ' + parent.keyword.value + '=' if parent.keyword else ''}"
            if isinstance(parent, (cst.Assign, cst.AnnAssign)):
                target = parent.targets[0].target if isinstance(parent, cst.Assign) else parent.target
                return f"assigned to `{_norm(_code(target))[:40]}`"
            if isinstance(parent, cst.Param):
                return f"default of parameter `{parent.name.value}`"
            if isinstance(parent, (cst.Return,)):
                return "returned"
            if isinstance(parent, cst.BaseSmallStatement):
                return type(parent).__name__
        return "other"

    def _statement(self) -> Optional[cst.CSTNode]:
        for node in reversed(self.stack):
            if isinstance(node, cst.BaseSmallStatement):
                return node
            if isinstance(node, cst.BaseCompoundStatement):
                return None
        return None

    def _device_assign(self, node, target) -> None:
        if target is None:
            return
        name = (_dotted(target) or "").rsplit(".", 1)[-1]
        if not re.search(r"(?i)^(device|dev)$|_device$", name) or node.value is None:
            return
        if not re.search(r"cuda\s*\.\s*is_available", _code(node.value)):
            return
        self.device_assigns.append((node, target, self._guarded_already()))

    def _decide_device_assigns(self) -> None:
        planted = [(m.start, m.end) for m in self.mutations if m.kind == "TDL002"]
        for node, target, guarded in self.device_assigns:
            start, end = self.span(node.value)
            if any(start <= s and e <= end for s, e in planted):
                continue  # the value's conditional expression is mutated already
            value = node.value
            if isinstance(value, cst.Call) and _dotted(value.func) in ("torch.device", "device"):
                replacement = f'{self.text(value.func)}("cuda")'
            else:
                replacement = '"cuda"'
            self.add("TDL002", "device-assign", start, end, replacement, node,
                     "already inside a CUDA-guarded block" if guarded else None,
                     {"value": _norm(self.text(value))[:80], "target": _norm(_code(target))})

    # -- TDL003: drop map_location

    def _tdl003(self, node: cst.Call) -> None:
        qualname = self.qualname(node.func)
        if qualname not in _LOADS or any(a.star for a in node.args):
            return
        args = list(node.args)
        index = next((i for i, a in enumerate(args)
                      if a.keyword is not None and a.keyword.value == "map_location"), None)
        shape = "keyword"
        if index is None:
            position = _LOADS[qualname]
            positional = [i for i, a in enumerate(args) if a.keyword is None]
            if len(positional) != position + 1:
                return  # none there, or more positional arguments after it
            index, shape = positional[position], "positional"
        if isinstance(args[index].value, cst.Name) and args[index].value.value == "None":
            return  # map_location=None: removing it changes nothing
        if len(args) == 1:
            return
        if index + 1 < len(args):
            start, _ = self.span(args[index])
            end, _ = self.span(args[index + 1])
        else:
            _, start = self.span(args[index - 1])
            _, end = self.span(args[index])
        scope = self.scopes[-1]
        target = _norm(self.text(args[0].value)) if args[0].keyword is None else None
        self.loads.append((node, start, end, shape, qualname, scope, target,
                           self._statement()))

    def _decide_loads(self) -> None:
        for node, start, end, shape, qualname, scope, target, statement in self.loads:
            skip = None
            if target is not None and any(saved == target and at < start for saved, at in scope.saves):
                skip = "round trip: torch.save to the same target earlier in the same function"
            call_start, call_end = self.span(node)
            self.add("TDL003", f"{qualname.rsplit('.', 1)[0].replace('torch.', '') or 'torch'}"
                     f".{qualname.rsplit('.', 1)[-1]}:{shape}", start, end, "",
                     statement or node, skip, {"call": _norm(self.source[call_start:call_end])[:100]})

    def leave_Call(self, original_node: cst.Call) -> None:
        if self.qualname(original_node.func) in ("torch.save", "torch.jit.save") \
                and len(original_node.args) >= 2:
            self.scopes[-1].saves.append((_norm(self.text(original_node.args[1].value)),
                                          self.span(original_node)[0]))

    # -- TDL004: delete or strip a batch move in a loader loop

    def _batch_names(self) -> set:
        names: set = set()
        for _, loop_names in self.loops:
            names |= loop_names
        return names

    def _batch_derived(self, value: cst.BaseExpression, names: set) -> bool:
        if isinstance(value, (cst.Tuple, cst.List)):
            return bool(value.elements) and all(self._batch_derived(e.value, names)
                                                for e in value.elements)
        if isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)):
            return _root_name(value) in names
        if isinstance(value, cst.Call) and _dotted(value.func) in ("next", "iter"):
            return False
        return False

    def _tdl004_statement(self, node: cst.Assign) -> None:
        names = self._batch_names()
        target = node.targets[0].target if len(node.targets) == 1 else None
        value = node.value
        # Names unpacked from the batch join the batch values (``x, y = batch``).
        if target is not None and self._batch_derived(value, names):
            self.loops[-1][1].update(_names_in_target(target))
            return
        if target is None:
            return
        shape = None
        if isinstance(target, cst.Name) and target.value in names:
            if isinstance(value, cst.Call) and _moves_to_device(value) \
                    and _root_name(value.func.value) == target.value:
                shape = "delete" if isinstance(value.func.value, cst.Name) else "delete-chained"
            elif isinstance(value, (cst.DictComp, cst.ListComp, cst.GeneratorExp, cst.Call)) \
                    and re.search(r"\.(to|cuda)\s*\(", _code(value)) \
                    and re.search(rf"\b{re.escape(target.value)}\b", _code(value)):
                shape = "delete-comprehension" if not isinstance(value, cst.Call) or \
                    isinstance(value.func, cst.Name) and value.func.value in (
                        "tuple", "list", "dict") else None
            if shape is None and isinstance(value, cst.Call) and _move_call(value) is None \
                    and any(isinstance(a.value, cst.Name) and a.value.value == target.value
                            for a in value.args) \
                    and any(re.search(r"(?i)device|cuda|gpu|rank", _code(a.value))
                            for a in value.args):
                shape = "delete-helper"
        elif isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple) \
                and len(target.elements) == len(value.elements) and target.elements:
            ok = True
            for t, v in zip(target.elements, value.elements):
                if not (isinstance(t.value, cst.Name) and t.value.value in names
                        and isinstance(v.value, cst.Call) and _moves_to_device(v.value)
                        and _root_name(v.value.func.value) == t.value.value):
                    ok = False
            shape = "delete-tuple" if ok else None
        if shape is None:
            return
        self._delete_statement(node, shape, target)

    def _delete_statement(self, node: cst.Assign, shape: str, target) -> None:
        line_node = self.stack[-2]  # the SimpleStatementLine (or suite) holding it
        block = self.stack[-3] if len(self.stack) >= 3 else None
        small = list(line_node.body)
        i = next(k for k, s in enumerate(small) if s is node)
        start, end = self.span(node)
        replacement = ""
        if len(small) > 1:
            if i + 1 < len(small):
                end = self.span(small[i + 1])[0]
            else:
                start = self.span(small[i - 1])[1]
        elif isinstance(line_node, cst.SimpleStatementSuite) or (
                isinstance(block, cst.IndentedBlock) and len(block.body) == 1):
            replacement = "pass"
        else:
            # the whole line(s), with its newline; comments above it stay
            line = self.line_of(start)
            end_line = self.line_of(self.span(line_node)[1])
            if self.source[self.starts[line - 1]:start].strip():
                replacement = "pass"
            else:
                start = self.starts[line - 1]
                end = self.starts[end_line] if end_line < len(self.starts) else len(self.source)
        self.tdl004_done.add(id(node.value))
        values = _names_in_target(target)
        self.add("TDL004", shape, start, end, replacement, node, self._no_sink(values),
                 self._tdl004_hints(values))

    def _tdl004_strip(self, node: cst.Call) -> None:
        if id(node) in self.tdl004_done or not _moves_to_device(node):
            return
        receiver = node.func.value
        if _root_name(receiver) not in self._batch_names():
            return
        parent = self.stack[-2] if len(self.stack) >= 2 else None
        if any(id(n) in self.tdl004_done for n in self.stack[:-1]):
            return
        if isinstance(parent, cst.Arg):
            call = self.stack[-3]
            callee = _dotted(call.func) if isinstance(call, cst.Call) else None
            if callee is None or _NOT_A_SINK.search(callee):
                return
            shape = "strip-argument"
        elif isinstance(parent, cst.Assign) and parent.value is node:
            shape = "strip-assigned"
        elif isinstance(parent, cst.Element) and isinstance(self.stack[-3], cst.Tuple) \
                and isinstance(self.stack[-4], cst.Assign):
            shape = "strip-assigned"
        else:
            return
        skip = None
        values = [_root_name(receiver)]
        if shape == "strip-assigned":
            assign = parent if isinstance(parent, cst.Assign) else self.stack[-4]
            values = [n for t in assign.targets for n in _names_in_target(t.target)]
            skip = self._no_sink(values)
        start, end = self.span(node)
        self.add("TDL004", shape, start, end, self.text(receiver), self._statement(), skip,
                 self._tdl004_hints(values))

    def _no_sink(self, values: List[str]) -> Optional[str]:
        """Why deleting the move of ``values`` is no unmoved-batch bug: none of them (or of
        the names computed from them in the loop) reaches a call that may be a model or a
        loss, or a comparison; None when one does."""
        loop = self.loops[-1][0]
        prepared = self._prepared(loop)
        if prepared:
            return prepared
        tainted = set(values)
        finder = _SinkFinder(tainted)
        loop.body.visit(finder)
        return None if finder.found else \
            "the batch value reaches no model, loss or comparison in the loop"

    def _prepared(self, loop: cst.For) -> Optional[str]:
        """The loop's loader comes from accelerate's ``prepare`` or Lightning Fabric's
        ``setup_dataloaders``, which put batches on the device themselves."""
        for match in re.finditer(r"\w*(?:loader|dl)\w*", _code(loop.iter), re.I):
            name = re.escape(match.group(0))
            if re.search(rf"^[ \t]*[^\n=#]*\b{name}\b[^\n=]*=\s*[\w.]*\b(prepare|setup_dataloaders"
                         rf"|prepare_data_loader)\s*\(", self.source, re.M):
                return "the loader is prepared by accelerate/Fabric (batches arrive on the device)"
        return None

    def _tdl004_hints(self, values: List[str]) -> dict:
        loop = self.loops[-1][0]
        loop_text = _code(loop.body)
        model_names = sorted({m.group(1) for m in re.finditer(
            r"([\w.]+)\((?:[^()]|\([^()]*\))*?\b(?:%s)\b" % "|".join(map(re.escape, values)),
            loop_text)} - {"range", "len", "print", "enumerate", "zip"})[:4]
        scope = self.scopes[-1]
        params = [n for n in model_names if n.split(".")[0] in scope.params]
        moved = [n for n in model_names if re.search(
            rf"\b{re.escape(n)}\s*(?:=.*)?\.(?:to|cuda)\s*\(", self.source)
            or re.search(rf"\b{re.escape(n)}\s*=\s*.*\.(?:to|cuda)\s*\(", self.source)]
        names = self._batch_names()
        moves = sum(1 for m in re.finditer(r"\b(\w+)\b[\w.\[\]'\"]*\.(?:to|cuda)\s*\(", loop_text)
                    if m.group(1) in names)
        wrappers = re.findall(r"([\w.]+)\(", _code(loop.iter))
        flags = [flag for flag, pattern in (("DataParallel", r"DataParallel|DistributedDataParallel"),
                                            ("accelerate", r"\baccelerate\b|Accelerator\("),
                                            ("fabric", r"\bFabric\b|\bfabric\."))
                 if re.search(pattern, self.source)]
        return {"iter": _norm(_code(loop.iter))[:60], "values": ",".join(values),
                "batch_moves_in_loop": str(moves),
                "iter_wrappers": ",".join(w for w in wrappers if w not in ("enumerate", "zip", "iter")),
                "file_uses": ",".join(flags),
                "calls_with_it": ",".join(model_names) or "(none)",
                "callee_params": ",".join(params), "callees_moved_in_file": ",".join(moved)}


class _SinkFinder(cst.CSTVisitor):
    """Does a name of ``tainted`` (which grows with names assigned from it, in source order)
    reach a call that may be a model or a loss, or a comparison?"""

    def __init__(self, tainted: set) -> None:
        super().__init__()
        self.tainted = tainted
        self.found = False

    def _mentions(self, node: Optional[cst.CSTNode]) -> bool:
        if node is None:
            return False
        names: set = set()

        class _Names(cst.CSTVisitor):
            def visit_Name(self, name: cst.Name) -> None:
                names.add(name.value)

        node.visit(_Names())
        return bool(names & self.tainted)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._mentions(node.value):
            for target in node.targets:
                self.tainted.update(_names_in_target(target.target))

    def visit_Call(self, node: cst.Call) -> None:
        callee = _dotted(node.func)
        if callee is not None and _NOT_A_SINK.search(callee):
            return
        if any(self._mentions(arg.value) for arg in node.args):
            self.found = True

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if self._mentions(node):
            self.found = True


def _snippet_norm(text: str) -> str:
    lines = [line for line in text.splitlines() if not line.startswith("# torchdevlint: cell ")]
    return _norm("\n".join(lines))


# -- per-file work (run in worker processes) ---------------------------------------------------


def _read_program(path: Path) -> Tuple[str, object]:
    """The Python text to mutate and lint, and the Notebook for notebooks (else None)."""
    data = path.read_bytes()
    if path.suffix == NOTEBOOK_SUFFIX:
        notebook = parse_notebook(data)
        if not is_python_notebook(notebook):
            raise NotebookError("not a Python notebook")
        return notebook.program, notebook
    return decode_source(data).text, None


# Text without which a kind has no mutation in a file (spares the parse).
_NEEDED = {"TDL001": re.compile(r"\.\s*(?:to|cuda|cpu)\s*\("), "TDL002": re.compile("cuda"),
           "TDL003": re.compile("load"), "TDL004": re.compile(r"\.\s*(?:to|cuda)\s*\("),
           "TDL005": re.compile("register_buffer"), "TDL006": re.compile("Module(?:List|Dict)"),
           "TDL008": re.compile(r"\.\s*cpu\s*\(")}


def find_mutations(source: str, path: str, kinds: Sequence[str] = KINDS,
                   notebook=None) -> List[Mutation]:
    """Every mutation of ``kinds`` in ``source`` (parsed once), in source order."""
    kinds = [k for k in kinds if _NEEDED[k].search(source)]
    if "TDL004" in kinds and not _LOADER_ITER.search(source):
        kinds.remove("TDL004")
    if not kinds:
        return []
    module = cst.parse_module(source)
    finder = _Finder(source, path, kinds, notebook)
    MetadataWrapper(module, unsafe_skip_copy=True).visit(finder)
    return sorted(finder.mutations, key=lambda m: (m.start, m.kind, m.end))


def _find_in_file(task: Tuple[str, Tuple[str, ...]]) -> Tuple[str, List[Mutation], Optional[str]]:
    path, kinds = task
    try:
        source, notebook = _read_program(Path(path))
        with gc_paused():
            return path, find_mutations(source, path, kinds, notebook), None
    except (OSError, SourceError, NotebookError) as exc:
        return path, [], f"cannot read: {exc}"
    except (cst.ParserSyntaxError, RecursionError) as exc:
        return path, [], f"cannot parse: {type(exc).__name__}"


def lint_program(source: str, path: str, notebook: bool) -> Tuple[Optional[list], Optional[str]]:
    """Findings as (code, line, message) of a program (program lines for notebooks)."""
    with gc_paused():
        result = lint_source(source, path, ALL_RULES, apply_noqa=False)
        findings = result.findings
        error = result.error
        result.drop_tree()
    if error is not None:
        return None, error.format()
    if notebook:
        findings = displayed_filter(source, findings)
    return [(f.code, f.line, f.message) for f in findings], None


def _shifted(findings: Iterable[tuple], first: int, last: int, delta: int) -> Counter:
    """Findings keyed with lines outside the edited span [first, last] put in the original's
    numbering (``delta``: lines the edit added), and lines inside it as one place."""
    keys: Counter = Counter()
    for code, line, message in findings:
        if line < first:
            keys[(code, line, message)] += 1
        elif line > last:
            keys[(code, line - delta, message)] += 1
        else:
            keys[(code, "edited", message)] += 1
    return keys


def judge(original: list, mutant: list, mutation: Mutation, source: str) -> Tuple[bool, List[str]]:
    """Caught? and the codes of all the findings the mutant added."""
    removed = source[mutation.start:mutation.end]
    delta = mutation.replacement.count("\n") - removed.count("\n")
    before = _shifted(original, mutation.line, mutation.end_line, 0)
    after = _shifted(mutant, mutation.line, mutation.end_line + delta, delta)
    new = after - before
    codes = sorted({key[0] for key in new})
    return mutation.kind in codes, codes


def apply(source: str, mutation: Mutation) -> str:
    return source[:mutation.start] + mutation.replacement + source[mutation.end:]


def _lint_task(task: Tuple[str, List[Mutation]]) -> List[Mutation]:
    path, mutations = task
    try:
        source, notebook = _read_program(Path(path))
    except (OSError, SourceError, NotebookError) as exc:
        for mutation in mutations:
            mutation.error = f"cannot read: {exc}"
        return mutations
    original, error = lint_program(source, path, notebook is not None)
    for mutation in mutations:
        if original is None:
            mutation.error = f"original: {error}"
            continue
        mutated = apply(source, mutation)
        findings, error = lint_program(mutated, path, notebook is not None)
        if findings is None:
            mutation.error = f"mutant: {error}"
            continue
        mutation.caught, mutation.new_codes = judge(original, findings, mutation, source)
    return mutations


# -- the run -----------------------------------------------------------------------------------


def _map(func, items: list, jobs: int):
    if jobs <= 1 or len(items) < 2:
        yield from map(func, items)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(func, items, chunksize=1)


def collect_files(paths: Sequence[str]) -> List[str]:
    files = [p for p in iter_python_files(paths, Resolver(isolated=True))
             if p.suffix in (".py", NOTEBOOK_SUFFIX)]
    return [display_path(p) for p in files]


def _sample(mutations: List[Mutation], limit: Optional[int], seed: int) -> List[Mutation]:
    """All mutations, or every copy of ``limit`` distinct mutations per kind."""
    if limit is None:
        return mutations
    groups: Dict[str, Dict[tuple, list]] = defaultdict(lambda: defaultdict(list))
    for mutation in mutations:
        groups[mutation.kind][mutation.text_key].append(mutation)
    rng = random.Random(seed)
    chosen = []
    for kind in sorted(groups):
        keys = sorted(groups[kind])
        for key in sorted(rng.sample(keys, min(limit, len(keys)))):
            chosen.extend(groups[kind][key])
    return chosen


def run(paths: Sequence[str], kinds: Sequence[str] = KINDS, jobs: int = 1,
        limit: Optional[int] = None, seed: int = 0, progress=None) -> dict:
    """Find, plant and lint; returns {"files", "unreadable", "mutations": [Mutation]}."""
    files = collect_files(paths)
    found: List[Mutation] = []
    unreadable: Dict[str, str] = {}
    for path, mutations, error in _map(_find_in_file, [(f, tuple(kinds)) for f in files], jobs):
        if error:
            unreadable[path] = error
        found.extend(mutations)
    if progress:
        progress(f"{len(files)} files, {len(found)} mutants found")
    chosen = _sample(found, limit, seed)
    to_lint = [m for m in chosen if m.skip is None]
    by_file: Dict[str, List[Mutation]] = defaultdict(list)
    for mutation in to_lint:
        by_file[mutation.path].append(mutation)
    tasks = [(path, group[i:i + MUTANTS_PER_TASK]) for path, group in by_file.items()
             for i in range(0, len(group), MUTANTS_PER_TASK)]
    tasks.sort(key=lambda t: -len(t[1]))  # big tasks first: the pool finishes evenly
    linted: Dict[tuple, Mutation] = {}
    done = 0
    for results in _map(_lint_task, tasks, jobs):
        for mutation in results:
            linted[(mutation.path, mutation.start, mutation.end, mutation.kind,
                    mutation.replacement)] = mutation
        done += 1
        if progress and done % 50 == 0:
            progress(f"linted {done}/{len(tasks)} tasks")
    result = [linted.get((m.path, m.start, m.end, m.kind, m.replacement), m) for m in chosen]
    return {"files": len(files), "unreadable": unreadable, "mutations": result}


def summarize(mutations: Sequence[Mutation], kinds: Sequence[str] = KINDS) -> Dict[str, dict]:
    summary = {}
    for kind in kinds:
        planted = [m for m in mutations if m.kind == kind and m.skip is None]
        judged = [m for m in planted if m.caught is not None]
        groups: Dict[tuple, List[Mutation]] = defaultdict(list)
        for mutation in judged:
            groups[mutation.text_key].append(mutation)
        caught = sum(all(m.caught for m in g) for g in groups.values())
        partly = sum(any(m.caught for m in g) and not all(m.caught for m in g)
                     for g in groups.values())
        shapes: Dict[str, list] = defaultdict(lambda: [0, 0])
        for group in groups.values():
            shapes[group[0].shape][0] += 1
            shapes[group[0].shape][1] += all(m.caught for m in group)
        summary[kind] = {
            "mutants": len(planted),
            "caught_mutants": sum(bool(m.caught) for m in judged),
            "errors": len(planted) - len(judged),
            "skipped": len([m for m in mutations if m.kind == kind and m.skip is not None]),
            "skip_reasons": dict(Counter(m.skip for m in mutations
                                         if m.kind == kind and m.skip is not None)),
            "distinct_per_file": len({m.file_key for m in judged}),
            "distinct": len(groups),
            "caught": caught,
            "partly": partly,
            "recall": caught / len(groups) if groups else None,
            "shapes": {shape: {"distinct": n, "caught": c} for shape, (n, c) in sorted(shapes.items())},
        }
    return summary


def missed_sample(mutations: Sequence[Mutation], kind: str, count: int, seed: int) -> List[Mutation]:
    """One copy each of ``count`` distinct mutations of ``kind`` not caught everywhere."""
    groups: Dict[tuple, List[Mutation]] = defaultdict(list)
    for mutation in mutations:
        if mutation.kind == kind and mutation.skip is None and mutation.caught is not None:
            groups[mutation.text_key].append(mutation)
    missed = [next(m for m in g if not m.caught) for k, g in sorted(groups.items())
              if not all(m.caught for m in g)]
    rng = random.Random(seed)
    picked = rng.sample(missed, min(count, len(missed)))
    return sorted(picked, key=lambda m: (m.path, m.line))


def format_table(summary: Dict[str, dict]) -> str:
    header = ("rule", "mutants", "caught", "per-file distinct", "distinct", "caught",
              "partly", "recall", "skipped")
    rows = [header]
    for kind, s in summary.items():
        recall = f"{100 * s['recall']:.1f}%" if s["recall"] is not None else "-"
        rows.append((kind, str(s["mutants"]), str(s["caught_mutants"]),
                     str(s["distinct_per_file"]), str(s["distinct"]), str(s["caught"]),
                     str(s["partly"]), recall, str(s["skipped"])))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in
                       enumerate(zip(row, widths))) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_report(outcome: dict, summary: Dict[str, dict], show_missed: int, seed: int) -> str:
    out = [format_table(summary), ""]
    out.append("mutants/caught: every planted mutant; distinct: mutants with the same rule and "
               "snippet counted once\n(caught only when caught in every copy; partly: in "
               "some copies); recall = caught / distinct.")
    for kind, s in summary.items():
        shapes = ", ".join(f"{shape} {v['caught']}/{v['distinct']}" for shape, v in s["shapes"].items())
        if shapes:
            out.append(f"{kind} by shape (caught/distinct): {shapes}")
        for reason, n in sorted(s["skip_reasons"].items(), key=lambda kv: -kv[1]):
            out.append(f"{kind} skipped {n}: {reason}")
        if s["errors"]:
            out.append(f"{kind}: {s['errors']} mutants could not be linted")
    out.append(f"{outcome['files']} files read ({len(outcome['unreadable'])} unreadable or "
               f"unparsable, skipped).")
    if show_missed:
        for kind in summary:
            missed = missed_sample(outcome["mutations"], kind, show_missed, seed)
            if not missed:
                continue
            out.append("")
            out.append(f"Missed {kind} ({len(missed)} shown):")
            for m in missed:
                out.append(f"  {m.location}: [{m.shape}] {m.before[:110]}")
                out.append(f"      -> {m.after[:110]}")
                hints = "; ".join(f"{k}: {v}" for k, v in m.hints.items() if v)
                if hints:
                    out.append(f"      ({hints})")
                if m.new_codes:
                    out.append(f"      (new findings of other rules: {', '.join(m.new_codes)})")
    return "\n".join(out)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description="Plant one device bug per mutant in correct code and report what "
                    "torchdevlint catches, per rule.",
        epilog="See the top of benchmarks/recall.py and benchmarks/recall.md for what is planted.")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or directories to mutate")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help="mutation kinds, by rule code (default: all six)")
    parser.add_argument("--show-missed", type=int, default=0, metavar="N",
                        help="print N missed distinct mutations per rule")
    parser.add_argument("--json", metavar="FILE", help="write every mutant and the summary as JSON")
    parser.add_argument("--seed", type=int, default=0, help="for --limit-per-kind and --show-missed")
    parser.add_argument("--limit-per-kind", type=int, metavar="N",
                        help="lint only N distinct mutations (all their copies) per rule")
    args = parser.parse_args(argv)
    kinds = [k.strip().upper() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        parser.error(f"unknown kinds: {', '.join(unknown) or '(none)'}; choose from {', '.join(KINDS)}")
    started = time.perf_counter()

    def progress(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {message}", file=sys.stderr, flush=True)

    try:
        outcome = run(args.paths, kinds, max(1, args.jobs), args.limit_per_kind, args.seed, progress)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = summarize(outcome["mutations"], kinds)
    print(format_report(outcome, summary, args.show_missed, args.seed))
    print(f"({time.perf_counter() - started:.1f} s)")
    if args.json:
        document = {"summary": summary, "files": outcome["files"],
                    "unreadable": outcome["unreadable"],
                    "mutants": [dataclasses.asdict(m) for m in outcome["mutations"]]}
        Path(args.json).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
