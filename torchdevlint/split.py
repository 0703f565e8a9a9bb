"""Huge literal tables are linted one element at a time.

Generated tables are single statements of hundreds of kilobytes: torch's ``op_db`` is 660 KB
of ``OpInfo(...)`` entries, and LibCST needs about 560 bytes of memory per byte of such source
(the tree of ``common_methods_invocations.py``, 1.3 MB, is 730 MB). For a large file, each
module-level ``NAME = [...]`` / ``(...)`` / ``{...}`` literal above a size limit is blanked out of
the source (its interior becomes spaces, line breaks kept, so every other token keeps its
line and column), the rest of the file is parsed and analysed as usual, and then each element
is parsed on its own as ``[element]``, analysed in the context of the statement it sits in,
checked, and dropped before the next one.

An element is an expression, so it holds no statement, loop, import or definition: nothing
in it can change what the rest of the module means, except an assignment expression (``:=``),
and a literal with one is never split. The one way the rest of the module depends on an
element is a call made in it, which the module's analysis then cannot see; those callee
names are handed to it (``Collected.unseen_call_names``) so that reasoning about "every
caller" stays silent for them.

The same blanking, keeping every line and column, leaves out an expression nested deeper
than LibCST can take (``without_deep_expressions``): it becomes ``(...)``.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from torchdevlint.positions import line_starts

# Only files this large are considered, so ordinary files pay nothing (not even ``ast``).
LARGE_FILE_CHARS = 256 * 1024
# A module-level literal this large is split into its elements.
LARGE_LITERAL_CHARS = 32 * 1024

_NOT_LINE_BREAK = re.compile(r"[^\r\n]")
_OPENING = {ast.List: "[", ast.Tuple: "(", ast.Dict: "{"}


@dataclass(frozen=True)
class Element:
    start: int  # offsets into the source
    end: int
    line: int  # 1-based line and column of ``start``
    column: int


@dataclass(frozen=True)
class SplitLiteral:
    # Index of the statement among the module's statements, counting each statement of a
    # ``a = 1; b = 2`` line separately (as ``ast`` and LibCST's small statements both do).
    statement_index: int
    elements: List[Element]  # a dict's elements are its ``key: value`` items
    brackets: str = "[]"  # what an element is parsed in: "[]", or "{}" for a dict's items


@dataclass(frozen=True)
class SplitPlan:
    skeleton: str  # the source with every split literal's interior blanked out
    literals: List[SplitLiteral]


def plan_split(source: str, min_literal: Optional[int] = None) -> Optional[SplitPlan]:
    """The literals (of ``min_literal`` characters or more, default ``LARGE_LITERAL_CHARS``) to
    split out of ``source``, or None when there is none (or the file is one Python's parser
    rejects: the ordinary path reports that)."""
    if min_literal is None:
        min_literal = LARGE_LITERAL_CHARS
    if "\r" in source.replace("\r\n", ""):
        return None  # lone-CR line breaks: ``ast`` and the offsets below could disagree
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    starts = line_starts(source)
    offset = ast_offsets(source, starts)
    literals: List[SplitLiteral] = []
    spans = []
    for statement_index, statement in enumerate(tree.body):
        if isinstance(statement, ast.Assign):
            if not all(isinstance(target, ast.Name) for target in statement.targets):
                continue
        elif not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        value = statement.value
        opening = _OPENING.get(type(value))
        if opening is None:
            continue
        if isinstance(value, ast.Dict):
            if not value.keys or any(key is None for key in value.keys):
                continue  # empty, or a ``**mapping`` item (whose ``**`` no node spans)
            items = [(key, item) for key, item in zip(value.keys, value.values)]
        else:
            items = [(element, element) for element in value.elts]
            if not items:
                continue
        start = offset(value.lineno, value.col_offset)
        end = offset(value.end_lineno, value.end_col_offset)
        if end - start < min_literal or source[start] != opening:
            continue  # small, or a tuple without parentheses
        if ":=" in source[start:end]:
            continue  # an assignment expression binds a name in the module
        elements = []
        for first, last in items:
            element_start = offset(first.lineno, first.col_offset)
            element_end = offset(last.end_lineno, last.end_col_offset)
            if first is not last:
                # A node's span leaves out the parentheses around it: a list element loses
                # both (harmless), a dict item its key's "(" and its value's ")".
                element_start, element_end = _widen(source, element_start, element_end)
            line = bisect.bisect_right(starts, element_start)
            elements.append(Element(element_start, element_end, line,
                                    element_start - starts[line - 1] + 1))
        literals.append(SplitLiteral(statement_index, elements,
                                     "{}" if isinstance(value, ast.Dict) else "[]"))
        spans.append((start + 1, end - 1))
    del tree
    if not literals:
        return None
    return SplitPlan(_blanked(source, spans), literals)


def ast_offsets(source: str, starts: List[int]) -> Callable[[int, int], int]:
    """``offset(line, byte_column)``: the offset in ``source`` of a position as Python's ``ast``
    gives it (1-based line, column in UTF-8 bytes); ``starts``: ``line_starts(source)``."""

    def offset(line: int, byte_column: int) -> int:
        start = starts[line - 1]
        end = starts[line] if line < len(starts) else len(source)
        text = source[start:end]
        if text.isascii():
            return start + byte_column
        return start + len(text.encode("utf-8")[:byte_column].decode("utf-8", "replace"))

    return offset


def _blanked(source: str, spans: List[Tuple[int, int]],
             fill: Optional[Callable[[str], str]] = None) -> str:
    """``source`` with each ``(start, end)`` span's text replaced by ``fill(text)`` (default:
    spaces, line breaks kept), which keeps the length and line breaks, and so every other
    token's line and column."""
    fill = fill or (lambda text: _NOT_LINE_BREAK.sub(" ", text))
    pieces, position = [], 0
    for start, end in spans:
        pieces.append(source[position:start])
        pieces.append(fill(source[start:end]))
        position = end
    pieces.append(source[position:])
    return "".join(pieces)


def without_deep_expressions(source: str, tree: Optional[ast.AST] = None) -> Optional[str]:
    """``source`` with each expression that nests or chains deeper than LibCST can take
    (``syntax.too_deep``) replaced by ``(...)``, padded with spaces, line breaks kept: the rest
    of the file keeps every line and column and is analysed as usual, and the replaced
    expression is a value torchdevlint cannot tell (so its rules stay silent about it).

    The expressions looked at are those a statement holds directly (its value, test,
    iterable, arguments of a decorator...), so the statement itself stays. None when the
    file cannot be mended so: a deep assignment target (``a.b.b.b... = 1``), a file Python's
    parser rejects, or one still too deep after the replacement."""
    from torchdevlint import syntax
    if tree is None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    offset = ast_offsets(source, line_starts(source))
    spans = []
    for statement in ast.walk(tree):
        if not isinstance(statement, ast.stmt):
            continue
        for child in ast.iter_child_nodes(statement):
            if not isinstance(child, ast.expr):
                continue
            start = offset(child.lineno, child.col_offset)
            end = offset(child.end_lineno, child.end_col_offset)
            if end - start <= syntax.MAX_DEPTH:  # (each level of depth takes a character)
                continue
            # (measured as the statement holds it: its line breaks are inside brackets)
            if syntax.nesting_depth("(" + source[start:end] + ")")[0] - 1 <= syntax.MAX_DEPTH:
                continue
            if isinstance(getattr(child, "ctx", None), (ast.Store, ast.Del)) \
                    or "   " not in _NOT_LINE_BREAK.sub(" ", source[start + 1:end - 1]):
                return None
            spans.append((start, end))
    if not spans:
        return None
    spans.sort()
    mended = _blanked(source, spans, _ellipsis)
    return mended if syntax.too_deep(mended) is None else None


def _ellipsis(text: str) -> str:
    """``text`` (an expression) as ``(...)``, same length and line breaks."""
    blank = _NOT_LINE_BREAK.sub(" ", text[1:-1])
    at = blank.index("   ")
    return "(" + blank[:at] + "..." + blank[at + 3:] + ")"


_GAP = re.compile(r"(?:[ \t\f\r\n\\]|#[^\r\n]*)*")


def _widen(source: str, start: int, end: int) -> tuple:
    """``start``/``end`` moved over the parentheses that enclose a dict item's key and value."""
    while True:
        before = start
        while before > 0 and source[before - 1] in " \t\f\r\n":
            before -= 1
        if before == 0 or source[before - 1] != "(":
            break
        start = before - 1
    while True:
        after = _GAP.match(source, end).end()
        if after >= len(source) or source[after] != ")":
            break
        end = after + 1
    return start, end


def element_source(source: str, element: Element, brackets: str = "[]") -> str:
    """The text parsed for one element: a one-element list (or dict), so that a starred
    element or one spread over several lines parses as it does inside the table."""
    return brackets[0] + source[element.start:element.end] + brackets[1]
