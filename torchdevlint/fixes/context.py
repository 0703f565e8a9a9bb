"""What the fix builders ask about one pass's source: where nodes are, how lines are indented,
which names exist, and the module-level definitions a fix may need."""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass, field
from itertools import accumulate, count
from typing import Callable, Dict, Iterator, List, Optional, Tuple

import libcst as cst

from torchdevlint import noqa
from torchdevlint.analysis import Analysis, device_names_visible, walk_code
from torchdevlint.analysis.builder import iter_children
from torchdevlint.analysis.model import ASSIGN, IMPORT, PARAM, Binding, Ctx, Scope
from torchdevlint.fixes.model import Edit, Fix, FixPlan
from torchdevlint.ipysyntax import MAGIC_PLACEHOLDER
from torchdevlint.notebook import after_cell_marker
from torchdevlint.positions import FastCodegenState, line_starts
from torchdevlint.torch_version import has_accelerator_api


@dataclass
class _SpanState(FastCodegenState):
    """Codegen that notes, for every node, its first token and the indentation of the block
    it is generated in (``starts``), and its last token (``ends``). Two plain stores per node,
    with the indentation joined only when it changes: a codegen of torch's rpc_test.py
    (7,000 lines) with them costs 0.18-0.21 s, against 0.31-0.46 s with a record list per
    node and the indentation joined for each (0.10 s without any)."""

    starts: Dict[int, Tuple[int, str]] = field(default_factory=dict)
    ends: Dict[int, int] = field(default_factory=dict)
    indent: str = ""

    def increase_indent(self, value: str) -> None:
        self.indent_tokens.append(value)
        self.indent = "".join(self.indent_tokens)

    def decrease_indent(self) -> None:
        self.indent_tokens.pop()
        self.indent = "".join(self.indent_tokens)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts[id(node)] = (len(self.tokens), self.indent)

    def after_codegen(self, node: cst.CSTNode) -> None:
        self.ends[id(node)] = len(self.tokens)


class FixContext:
    def __init__(self, source: str, module: cst.Module, analysis: Analysis) -> None:
        self.source = source
        self.module = module
        self.analysis = analysis
        self.newline = module.default_newline
        self._starts: Optional[Dict[int, Tuple[int, str]]] = None  # (see ``_SpanState``)
        self._ends: Dict[int, int] = {}
        self._offsets: List[int] = []
        self._line_starts = line_starts(source)
        self._noqa_lines: Optional[set] = None
        self._names: Optional[set] = None
        # What gives the names in use instead of this module's tree (a split file's: the
        # whole file's, from Python's ast), asked only when a fix needs a fresh name.
        self.names_from: Optional[Callable[[], set]] = None
        self._prelude_cache: Dict[tuple, Optional[Tuple[str, Edit]]] = {}
        self._parents: Optional[Dict[int, cst.CSTNode]] = None
        self._loop_ctx: Optional[Dict[int, Ctx]] = None

    # -- where things are -----------------------------------------------------------------

    def _record(self, node: cst.CSTNode) -> Optional[Tuple[int, int, str]]:
        """``node``'s first and last token and its block's indentation, from one codegen of
        the module with span records (made on first use); None for a node not in it."""
        if self._starts is None:
            state = _SpanState(default_indent=self.module.default_indent,
                               default_newline=self.module.default_newline)
            self.module._codegen(state)
            self._starts, self._ends = state.starts, state.ends
            self._offsets = [0, *accumulate(len(token) for token in state.tokens)]
        start = self._starts.get(id(node))
        return None if start is None else (start[0], self._ends[id(node)], start[1])

    def _span_record(self, node: cst.CSTNode) -> Tuple[int, int, str]:
        record = self._record(node)
        if record is None:
            raise KeyError(node)
        return record

    def span(self, node: cst.CSTNode) -> Tuple[int, int]:
        """Start and end offsets of ``node``'s code (statements include their leading lines)."""
        start, end, _ = self._span_record(node)
        return self._offsets[start], self._offsets[end]

    def indent(self, statement: cst.CSTNode) -> str:
        """The indentation the statements of ``statement``'s block are written with."""
        return self._span_record(statement)[2]

    def text(self, node: cst.CSTNode) -> str:
        start, end = self.span(node)
        return self.source[start:end]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._line_starts, offset)

    def at_line_start(self, offset: int) -> bool:
        return offset == 0 or self.source[offset - 1] in "\r\n"

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The nearest enclosing node that holds code."""
        if self._parents is None:
            parents: Dict[int, cst.CSTNode] = {}
            stack: List[cst.CSTNode] = [self.module]
            while stack:
                current = stack.pop()
                for child in iter_children(current):
                    parents[id(child)] = current
                    stack.append(child)
            self._parents = parents
        return self._parents.get(id(node))

    def loop_ctx(self, loop: cst.For) -> Optional[Ctx]:
        if self._loop_ctx is None:
            self._loop_ctx = {id(node): ctx for node, ctx, _ in self.analysis.collected.for_loops}
        return self._loop_ctx.get(id(loop))

    # -- # noqa ---------------------------------------------------------------------------

    def touches_noqa(self, edit: Edit) -> bool:
        """Whether ``edit`` changes a line that carries a ``# noqa`` comment (for any code)."""
        if edit.is_insertion and self.at_line_start(edit.start) and edit.text.endswith(("\n", "\r")):
            return False  # whole new lines between two lines edit neither
        if self._noqa_lines is None:
            self._noqa_lines = noqa.NoqaIndex(noqa.split_lines(self.source)).marked_lines()
        if not self._noqa_lines:
            return False
        first = self.line_of(edit.start)
        last = self.line_of(max(edit.start, edit.end - 1))
        return any(number in self._noqa_lines for number in range(first, last + 1))

    # -- names ----------------------------------------------------------------------------

    def names_in_use(self) -> set:
        """Every identifier the file binds or reads (not attribute names or keywords)."""
        if self._names is None and self.names_from is not None:
            self._names = self.names_from()
        if self._names is None:
            names = set()
            stack: List[cst.CSTNode] = [self.module]
            while stack:
                node = stack.pop()
                if isinstance(node, cst.Name):
                    names.add(node.value)
                    continue
                if isinstance(node, cst.Attribute):
                    stack.append(node.value)
                    continue
                if isinstance(node, cst.Arg):
                    stack.append(node.value)
                    continue
                stack.extend(iter_children(node))
            self._names = names
        return self._names

    def fresh_name(self, preferred: str) -> str:
        """``preferred``, else ``default_<preferred>``, else a numbered variant: a name the
        file uses nowhere, so defining it at module level shadows nothing."""
        used = self.names_in_use()
        for name in (preferred, f"default_{preferred}"):
            if name not in used:
                return name
        return next(name for name in (f"default_{preferred}_{n}" for n in count(1))
                    if name not in used)

    def all_scopes(self) -> Iterator[Scope]:
        collected = self.analysis.collected
        yield collected.module_scope
        for info in collected.functions:
            if info.scope is not None:
                yield info.scope
        for info in collected.classes:
            if info.scope is not None:
                yield info.scope

    def binding_before(self, binding: Binding, offset: int) -> bool:
        node = binding.node
        if node is None:
            return False
        try:
            return self.span(node)[1] <= offset
        except KeyError:
            return False

    def visible_binding(self, name: str, scope: Scope, use_offset: int,
                        accept: Callable[[Binding], bool]) -> bool:
        """Whether ``name`` read at ``use_offset`` in ``scope`` is bound, by bindings that
        ``accept`` approves, before it runs: in the same scope or an enclosing function
        earlier in the file, or at module level (read later, from a function)."""
        owner = scope.resolve(name)
        if owner is None:
            return False
        bindings = owner.bindings[name]
        if not bindings or not all(accept(b) for b in bindings):
            return False
        if owner.kind == "module" and scope.kind != "module":
            return True  # a global read from a function: bound once the module has run
        return all(b.how == PARAM or self.binding_before(b, use_offset) for b in bindings)

    # -- torch and devices ----------------------------------------------------------------

    def torch_reference(self, scope: Scope, use_offset: int) -> Optional[Tuple[str, bool]]:
        """(name to write for the torch module, whether ``import torch`` must be added), or
        None when no name can safely refer to torch here."""
        module_scope = self.analysis.collected.module_scope

        def is_torch(binding: Binding) -> bool:
            return binding.how == IMPORT and binding.value == "torch"

        for alias in self.analysis.torch_aliases():
            if scope.resolve(alias) is module_scope and (
                    scope.kind != "module" or
                    all(self.binding_before(b, use_offset) for b in module_scope.bindings[alias])):
                return alias, False
        # ``import torch`` would be added at module level: "torch" must mean nothing else.
        for each in self.all_scopes():
            if any(not is_torch(b) for b in each.bindings.get("torch", ())):
                return None
        return "torch", True

    def is_guarded_choice(self, value, scope: Scope) -> bool:
        """``"cuda" if torch.cuda.is_available() else "cpu"``, or the accelerator's device
        if there is one (``torch.accelerator.current_accelerator().type if
        torch.accelerator.is_available() else "cpu"``), also inside ``torch.device()``."""
        if isinstance(value, cst.Call) and value.args and \
                self.analysis.qualname(value.func, scope) == "torch.device":
            value = value.args[0].value
        return isinstance(value, cst.IfExp) and (
            self.analysis.is_guard_test(value.test, scope) or
            self.analysis.is_accelerator_choice(value, scope))

    def guarded_device_variable(self, scope: Scope, use_offset: int) -> Optional[str]:
        """A device variable in scope that is chosen at runtime from CUDA availability."""

        def accept(binding: Binding) -> bool:
            return binding.how == ASSIGN and not binding.path and \
                self.is_guarded_choice(binding.value, binding.ctx.scope)

        for name in device_names_visible(scope):
            if self.visible_binding(name, scope, use_offset, accept):
                return name
        return None

    def device_variable(self, scope: Scope, use_offset: int) -> Optional[str]:
        """A variable in scope holding a device (``device``, ``*_device``) that is never
        None: a parameter without a None default, or an assignment of something else."""

        def accept(binding: Binding) -> bool:
            if binding.how == PARAM:
                param = binding.value[0]
                return param.star == "" and not (
                    isinstance(param.default, cst.Name) and param.default.value == "None")
            return binding.how == ASSIGN and not binding.path and not (
                isinstance(binding.value, cst.Name) and binding.value.value == "None")

        for name in device_names_visible(scope):
            if self.visible_binding(name, scope, use_offset, accept):
                return name
        return None

    # -- module-level definitions -----------------------------------------------------------

    def _prelude_offset(self) -> Tuple[int, bool]:
        """Where module-level definitions go: after the docstring, ``__future__`` and the
        imports at the top of the file. (offset, whether it follows such a statement)

        In a notebook's program, the IPython lines at the top (``!pip install``, ``%%capture``)
        are passed over as well: the definitions go after the imports of the notebook's first
        cells (its import cell), or else before its first statement that is Python, never
        above a cell's magics."""
        body = self.module.body
        last = None
        first = body[0]
        for index, statement in enumerate(body):
            if not isinstance(statement, cst.SimpleStatementLine):
                first = statement
                break
            smalls = statement.body
            if all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in smalls):
                last = statement
            elif index == 0 and len(smalls) == 1 and isinstance(smalls[0], cst.Expr) and \
                    isinstance(smalls[0].value, (cst.SimpleString, cst.ConcatenatedString)):
                last = statement
            elif not _is_ipython_placeholder(statement):
                first = statement
                break
        if last is not None:
            return self.span(last)[1], True
        return after_cell_marker(self.source, self.span(first)[0]), False

    def prelude_edit(self, imports: Tuple[str, ...], definitions: Tuple[str, ...] = ()) -> Edit:
        """An edit adding ``imports`` right after the file's imports and ``definitions`` as a
        paragraph of their own after them."""
        offset, after_imports = self._prelude_offset()
        nl = self.newline
        text = "".join(line + nl for line in imports)
        if definitions:
            paragraph = "".join(line + nl for line in definitions)
            text = text + nl + paragraph if after_imports else text + paragraph + nl
        elif not after_imports:
            text += nl
        if not self.at_line_start(offset):
            text = nl + text
        return Edit(offset, offset, text, exclusive=True)

    def module_device(self, scope: Scope, use_offset: int) -> Optional[Tuple[str, Edit]]:
        """(name, edit) defining a module-level device chosen at runtime, usable from
        ``scope``; the same edit for every fix of a pass, so they can all apply together."""
        torch = self.torch_reference(self.analysis.collected.module_scope,
                                     self._prelude_offset()[0])
        if torch is None:
            return None
        alias, needs_import = torch
        key = ("device", alias, needs_import)
        if key not in self._prelude_cache:
            name = self.fresh_name("device")
            imports = ("import torch",) if needs_import else ()
            definition = (f"{name} = {runtime_device(alias, self.analysis.torch_version)}",)
            self._prelude_cache[key] = (name, self.prelude_edit(imports, definition))
        name, edit = self._prelude_cache[key]
        if scope.resolve(name) is not None:
            return None
        return name, edit

    def quote_near(self, node: cst.CSTNode) -> str:
        """The quote a string written into ``node`` takes: that of the first one-line string
        in ``node``, else the one most of the file uses (``file_quote``)."""
        for found in walk_code(node, into_functions=True):
            if isinstance(found, cst.SimpleString) and len(found.quote) == 1:
                return literal_quote(found)
        return file_quote(self.module)

    def import_torch_edit(self) -> Edit:
        return self.prelude_edit(("import torch",))


class ElementFixContext(FixContext):
    """The fix context of one element of a huge literal analysed apart (``torchdevlint.split``):
    the element's own tree (``[element]``, parsed on its own) and the file's (``whole``: the
    file with its huge literals blanked out, which keeps every offset), both in the file's
    offsets, so that a fix built here is the fix the whole file's tree would give. Questions
    about the module (names in use, where definitions go, torch's name) are ``whole``'s."""

    def __init__(self, whole: FixContext, text: str, fragment: cst.Module,
                 analysis: Analysis, shift: int) -> None:
        # (FixContext.__init__ is not called: everything file-wide is ``whole``'s, computed
        # once per file, not once per element)
        self.whole = whole
        self.source = whole.source
        self.module = fragment
        self.analysis = analysis
        self.newline = whole.newline
        self._line_starts = whole._line_starts
        self._shift = shift  # the file offset of ``text``'s first character
        self._starts = None
        self._ends = {}
        self._offsets = []
        self._parents = None
        # the file's module-level definitions: one edit for every fix that needs one
        self._prelude_cache = whole._prelude_cache
        self.bounds = (shift + 1, shift + len(text) - 1)  # the element, without the brackets

    def _own(self, node: cst.CSTNode) -> Optional[Tuple[int, int, str]]:
        return self._record(node)  # (the element's own nodes)

    def span(self, node: cst.CSTNode) -> Tuple[int, int]:
        record = self._own(node)
        if record is None:
            return self.whole.span(node)
        return self._offsets[record[0]] + self._shift, self._offsets[record[1]] + self._shift

    def indent(self, statement: cst.CSTNode) -> str:
        record = self._own(statement)
        return self.whole.indent(statement) if record is None else record[2]

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        found = super().parent(node)
        return found if found is not None else self.whole.parent(node)

    def loop_ctx(self, loop: cst.For) -> Optional[Ctx]:
        return self.whole.loop_ctx(loop)

    def touches_noqa(self, edit: Edit) -> bool:
        return self.whole.touches_noqa(edit)

    def names_in_use(self) -> set:
        return self.whole.names_in_use()

    def all_scopes(self) -> Iterator[Scope]:
        yield from self.whole.all_scopes()
        for info in self.analysis.collected.functions:  # the element's lambdas
            if info.scope is not None:
                yield info.scope

    def _prelude_offset(self) -> Tuple[int, bool]:
        return self.whole._prelude_offset()

    def prelude_edit(self, imports: Tuple[str, ...], definitions: Tuple[str, ...] = ()) -> Edit:
        return self.whole.prelude_edit(imports, definitions)

    def within(self, fix) -> bool:
        """Whether each of ``fix``'s edits is in the element or one of the file's module-level
        definitions (an edit elsewhere, at the brackets the element was parsed in, would be
        wrong in the file)."""
        start, end = self.bounds
        shared = {id(edit) for _, edit in filter(None, self.whole._prelude_cache.values())}
        return all(start <= edit.start and edit.end <= end or id(edit) in shared or
                   edit == self.whole.import_torch_edit() for edit in fix.edits)


def _is_ipython_placeholder(statement: cst.SimpleStatementLine) -> bool:
    """A notebook cell's IPython line in the program (``torchdevlint.ipysyntax``)."""
    comment = statement.trailing_whitespace.comment
    return len(statement.body) == 1 and isinstance(statement.body[0], cst.Pass) and \
        comment is not None and f"pass  {comment.value}" == MAGIC_PLACEHOLDER


def names_in_tree(tree: ast.AST) -> set:
    """``FixContext.names_in_use`` from Python's ``ast`` of the same source: every identifier
    bound or read, not attribute names or keywords (the file's names when its LibCST tree is
    never whole: ``torchdevlint.split``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Constant) and node.value in (True, False, None) and \
                type(node.value) in (bool, type(None)):
            names.add(repr(node.value))  # LibCST's Names True, False and None
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            if node.name != "*":  # (``from m import *``: an ImportStar, no Name)
                names.add(node.name.split(".")[0])
            if node.asname:
                names.add(node.asname)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        else:  # (by name: Python 3.9's ast has no match statement, 3.11's no type parameters)
            kind = type(node).__name__
            if kind in ("MatchAs", "MatchStar", "TypeVar", "ParamSpec", "TypeVarTuple") \
                    and node.name:
                names.add(node.name)
            elif kind == "MatchMapping" and node.rest:
                names.add(node.rest)
            elif kind == "MatchClass":
                names.update(node.kwd_attrs)
    return names


# Expressions that a method call (``.detach()``, ``.to(device)``) applies to whole, without
# parentheses; others (``loss / n``, ``a * 2``) are parenthesized first.
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def call_on(ctx: "FixContext", node: cst.BaseExpression, suffix: str) -> Tuple[Edit, ...]:
    """The edits that apply ``suffix`` (``.detach()``, ``.to(device)``) to all of ``node``."""
    start, end = ctx.span(node)
    if _atomic(node):
        return (Edit(end, end, suffix),)
    return (Edit(start, start, "("), Edit(end, end, ")" + suffix))


def call_on_text(text: str, node: cst.BaseExpression, suffix: str) -> str:
    """What ``call_on`` makes of ``node``, whose source is ``text``: a message's advice says
    what the fix writes (``(loss / n).detach()``, not ``loss / n.detach()``)."""
    return f"{text}{suffix}" if _atomic(node) else f"({text}){suffix}"


def each_moved(text: str, device: str) -> str:
    """``tuple(t.to(device) for t in hidden)``: each tensor of the tuple ``text`` (an LSTM's
    state a plain function made on the CPU) moved, with a loop name neither text uses."""
    return "tuple" + each_applied(text, f".to({device})", "()")


def each_applied(text: str, suffix: str, brackets: str = "[]") -> str:
    """``[t.cpu() for t in losses]``: ``suffix`` applied to each item of ``text``, with a loop
    name the texts do not use, in ``brackets`` (``"()"``: a generator)."""
    used = set(_IDENTIFIER.findall(text + " " + suffix))
    part = next(n for n in ("t", "part", "tensor_") if n not in used)
    return f"{brackets[0]}{part}{suffix} for {part} in {text}{brackets[1]}"


@dataclass
class EachItem(FixPlan):
    """Apply ``suffix`` to each item of ``node``, a tuple or list of tensors, which has no
    tensor method of its own: ``tuple(t.to(device) for t in hidden)`` (``into_tuple``),
    ``[t.detach().cpu() for t in results["loss"]]``. Unsafe: what else the container holds is
    not known. ``what`` begins the fix's description."""

    node: cst.BaseExpression
    suffix: str
    what: str
    into_tuple: bool = False

    def build(self, finding, ctx: "FixContext") -> Optional[Fix]:
        text = each_applied(ctx.text(self.node), self.suffix, "()" if self.into_tuple else "[]")
        if self.into_tuple:
            text = "tuple" + text
        start, end = ctx.span(self.node)
        return Fix(finding.code, False, f"{self.what} (`{text}`)", (Edit(start, end, text),))


def _atomic(node: cst.BaseExpression) -> bool:
    """A suffix applies to all of ``node`` as written: an atom, or an expression in its own
    parentheses (``(255 * fake[0])``, whose text and span hold them)."""
    return isinstance(node, _ATOMS) or bool(getattr(node, "lpar", ()))


def literal_quote(literal: Optional[cst.BaseExpression]) -> str:
    """The quote a string a fix writes beside ``literal`` takes: the literal's own (``'`` or
    ``"``), or ``"`` where it has none that fits (a triple quote, no literal)."""
    quote = literal.quote if isinstance(literal, cst.SimpleString) else ""
    return quote if len(quote) == 1 else '"'


def file_quote(module: cst.Module) -> str:
    """The quote a fix writes where it replaces no literal: the one most of the file's
    one-line strings use (``literal_quote`` of each; ``"`` on a tie or where there are none)."""
    counts = {"'": 0, '"': 0}
    for node in walk_code(module, into_functions=True):
        if isinstance(node, cst.SimpleString) and len(node.quote) == 1:
            counts[literal_quote(node)] += 1
    return "'" if counts["'"] > counts['"'] else '"'


def accelerator_device(torch: str, quote: str = '"') -> str:
    """PyTorch's own idiom from 2.6 on (its tutorials): the machine's accelerator, whichever it
    is (CUDA, Apple MPS, Intel XPU, ...), else the CPU. A string, as the tutorials have it."""
    return (f"{torch}.accelerator.current_accelerator().type if {torch}.accelerator.is_available() "
            f"else {quote}cpu{quote}")


def runtime_device(torch: str, torch_version: Tuple[int, int]) -> str:
    """The module-level device a fix defines: the accelerator's from torch 2.6 on, before
    that CUDA's (the only accelerator older torch can ask for by one name)."""
    if has_accelerator_api(torch_version):
        return accelerator_device(torch)
    return f'{torch}.device("cuda" if {torch}.cuda.is_available() else "cpu")'
