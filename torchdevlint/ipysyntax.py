"""Which lines of a notebook cell are Python: IPython's own rules, line for line.

IPython turns a cell into Python with ``IPython.core.inputtransformer2.TransformerManager``:
cleanup (leading blank lines, the indentation common to every line, ``>>>`` and ``In [1]:``
prompts), ``%%cell_magic`` cells, then special syntax found *by tokens*, one construct at a
time, earliest first, re-tokenising after each (``%magic``, ``!shell``, ``!!``, ``?``/``??``
help, the ``,`` ``;`` ``/`` autocall escapes at the start of a logical line, ``x = %magic``,
``x = !cmd``, ``obj?`` at the end of one; a construct goes on over backslash-continued
lines). Because it works on logical lines, ``print('%d'\\n      % n)`` and ``(a\\n != b)`` are
Python, while a line-by-line reading takes their continuation lines for magics.

This module follows the same steps, as IPython 9.16 and later take them (torchdevlint does
not import IPython; tests/test_ipython_differential.py compares the two) but keeps every line: a line that is IPython syntax becomes a
placeholder statement at its indentation, so program lines stay cell lines, and each Python
line loses only what IPython's cleanup removes from its start (``shift``, in characters),
so columns map back by adding it. The bodies of the cell magics that run their body as
IPython code (``%%time``, ``%%timeit``, ``%%capture``, ``%%prun``) are transformed as cells.
"""

from __future__ import annotations

import ast
import re
import textwrap
import tokenize
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

MAGIC_PLACEHOLDER = "pass  # torchdevlint: ipython"

# Cell magics that run their body through IPython's transform_cell/run_cell, as Python.
PYTHON_BODY_CELL_MAGICS = frozenset(("time", "timeit", "capture", "prun"))

PYTHON = "python"
SPECIAL = "ipython"  # the first line of an IPython construct
CONTINUED = "continued"  # a further (backslash-continued) line of one
CELL_MAGIC = "cell magic"  # the %%name line of a cell magic whose body is Python

_ESCAPE_SINGLES = frozenset("!?%,;/")
_HELP_END = re.compile(r"(%{0,2}(?!\d)[\w*]+(\.(?!\d)[\w*]+|\[-?[0-9]+\])*)(\?\??)$")
# The tokenizer errors IPython catches (IPython.utils.tokenutil), and "expected EOF".
_CAUGHT_TOKEN_ERRORS = ("unterminated string literal", "invalid non-printable character",
                        "after line continuation character", "invalid decimal literal",
                        "invalid binary literal", "invalid octal literal",
                        "invalid hexadecimal literal", "in binary literal", "in octal literal",
                        "expected EOF")


@dataclass
class CellLines:
    """A cell as Python: ``lines`` (one per cell line), what each is, and ``shift``: how many
    characters IPython's cleanup took from the start of the line (dedent, prompts)."""

    lines: List[str]
    kinds: List[str]
    shifts: List[int]
    python: bool = True  # False: a cell magic whose body is not Python (%%bash, %%html, ...)
    tree: Optional[ast.Module] = None  # the cell's ast, where its lines are all Python as written


# -- cleanup: IPython's cleanup_transforms -----------------------------------------------


def _leading_empty(lines: List[str]) -> int:
    for index, line in enumerate(lines):
        if line and not line.isspace():
            return index
    return 0


_PS1 = r"^\s*>>>[ \t]?"
_PS2 = r"^\s*\.\.\.[ \t]?"


def _triple_quote_mask(lines: List[str]) -> List[bool]:
    """IPython's guess of the lines inside a triple-quoted string whose prompts are kept."""
    mask: List[bool] = []
    in_triple: Optional[str] = None
    preserve = seen_prompt = False
    for line in lines:
        mask.append(in_triple is not None and preserve)
        for match in re.finditer(r"(?<!\\)(\"\"\"|''')", line):
            quote = match.group(1)
            if in_triple is None:
                in_triple = quote
                before = line[:match.start()]
                stripped = re.sub(_PS2, "", re.sub(_PS1, "", before, count=1), count=1)
                had_prompt = stripped != before
                preserve = bool(not (had_prompt and seen_prompt)
                                and re.match(r"(?i)^[rubf]*$", stripped.strip()))
                mask[-1] = preserve
            elif in_triple == quote:
                in_triple = None
                preserve = False
        seen_prompt = seen_prompt or bool(re.match(r"^\s*>>>", line))
    return mask


def _doctest_prompts(lines: List[str]) -> List[str]:
    """IPython's ``classic_prompt``: ``>>>``/``...`` prompts off (outside the strings that
    keep them), then the segments that had any dedented."""
    if not any(">>>" in line for line in lines):  # (the common case: no prompt at all)
        return lines
    mask = _triple_quote_mask(lines)
    if not any(not masked and re.match(r"^\s*>>>", line) for line, masked in zip(lines, mask)):
        return lines
    out, stripped = [], []
    for line, masked in zip(lines, mask):
        new = line
        if not masked:
            new = re.sub(_PS1, "", line, count=1) if re.match(_PS1, line) else \
                re.sub(_PS2, "", line, count=1)
        out.append(new)
        stripped.append(new != line)
    result: List[str] = []
    start = 0
    while start < len(out):
        end = start
        while end < len(out) and mask[end] == mask[start]:
            end += 1
        segment = out[start:end]
        if not mask[start] and any(stripped[start:end]):
            segment = textwrap.dedent("".join(segment)).splitlines(keepends=True)
        result.extend(segment)
        start = end
    return result


_IPYTHON_PROMPT = re.compile(r"""
    ^(((\[nav\]|\[ins\])?\ )?In\ \[\d+\]:\    # In [1]: (after a vi-mode marker)
    |\s*\.{3,}:\ ?)                            # ...:
    """, re.VERBOSE)


def _ipython_prompts(lines: List[str]) -> List[str]:
    """IPython's ``ipython_prompt``: ``In [1]:``/``...:`` prompts off, when the first line has
    one or the second line a prompt."""
    if lines and (_IPYTHON_PROMPT.match(lines[0]) or
                  (len(lines) > 1 and _IPYTHON_PROMPT.match(lines[1]))):
        return [_IPYTHON_PROMPT.sub("", line, count=1) for line in lines]
    return lines


def _dedent(lines: List[str]) -> List[str]:
    """IPython's ``leading_indent``: since IPython 9 the indentation common to every line;
    before it, the first line's indentation, taken from each line that starts with it. Where
    no indentation is common (a later line at column 1), the older rule is the only one under
    which the cell runs (``" def f(a):\n    return a\nprint(f(1))"``, a cell of
    rasbt/machine-learning-book's ch13 written under IPython 8), so it applies where it makes
    the cell Python; a cell that neither makes Python is left to IPython 9's reading."""
    if lines and not lines[0].startswith((" ", "\t")):  # a first line at column 1: nothing common
        return lines
    common = textwrap.dedent("".join(lines)).splitlines(keepends=True)
    if common and common[0].startswith((" ", "\t")):
        first = lines[0][:len(lines[0]) - len(lines[0].lstrip(" \t"))]
        older = [line[len(first):] if line.startswith(first) else line for line in lines]
        if _compiled("".join(older)) is not None:  # (plain Python so: nothing else of IPython's)
            return older
    return common


# -- special syntax: IPython's token transformers ----------------------------------------


def _tokens_by_line(lines: List[str]) -> List[List[tokenize.TokenInfo]]:
    """IPython's ``make_tokens_by_line``: tokens grouped by logical line."""
    groups: List[List[tokenize.TokenInfo]] = [[]]
    depth = 0
    try:
        for token in _tokens(lines):
            groups[-1].append(token)
            if token.type == tokenize.NEWLINE or (token.type == tokenize.NL and depth <= 0):
                groups.append([])
            elif token.type == tokenize.OP and token.string in ("(", "[", "{"):
                depth += 1
            elif token.type == tokenize.OP and token.string in (")", "]", "}") and depth > 0:
                depth -= 1
    except tokenize.TokenError:
        pass  # the cell ends inside a string or brackets
    if not groups[-1]:
        groups.pop()
    return groups


def _tokens(lines: List[str]):
    seen: List[tokenize.TokenInfo] = []
    try:
        for token in tokenize.generate_tokens(iter(lines).__next__):
            seen.append(token)
            yield token
    except (tokenize.TokenError, IndentationError, SyntaxError) as error:
        message = error.args[0] if error.args else ""
        if not isinstance(error, tokenize.TokenError) or \
                not any(caught in message for caught in _CAUGHT_TOKEN_ERRORS):
            raise tokenize.TokenError(message) from None
        if seen:
            start = (seen[-1].start[0], seen[-1].end[0])
            yield tokenize.TokenInfo(tokenize.ERRORTOKEN, "", start, start, seen[-1].line)
        else:
            yield tokenize.TokenInfo(tokenize.ERRORTOKEN, "", (1, 0), (1, 0), "")


def _assign_index(group: List[tokenize.TokenInfo]) -> Optional[int]:
    depth = 0
    for index, token in enumerate(group):
        if token.string == "=" and depth == 0:
            return index
        if token.string in ("(", "[", "{"):
            depth += 1
        elif token.string in (")", "]", "}") and depth > 0:
            depth -= 1
    return None


def _continued_end(lines: List[str], start: int) -> int:
    """The last line of the construct starting at ``start``: it goes on while a line ends
    with a backslash (up to the cell's last line)."""
    end = start
    while end + 1 < len(lines) and lines[end].endswith("\\\n"):
        end += 1
    return end


def _joined(lines: List[str], line: int, column: int, end: int) -> str:
    parts = [lines[line][column:]] + lines[line + 1:end + 1]
    return " ".join([p.rstrip()[:-1] for p in parts[:-1]] + [parts[-1].rstrip()])


@dataclass
class _Found:
    line: int  # 0-based
    column: int
    priority: int
    transform: Callable[[List[str]], Tuple[int, int]]  # -> (first, last) line replaced


def _magic_assign(groups, lines) -> Optional[_Found]:
    for group in groups:
        at = _assign_index(group)
        if at is not None and len(group) > at + 2 and group[at + 1].string == "%" \
                and group[at + 2].type == tokenize.NAME:
            line, column = group[at + 1].start[0] - 1, group[at + 1].start[1]
            return _Found(line, column, 10, lambda lines: (line, _continued_end(lines, line)))
    return None


def _system_assign(groups, lines) -> Optional[_Found]:
    for group in groups:
        at = _assign_index(group)
        if at is None or group[at].line.strip().startswith("=") or len(group) < at + 2:
            continue
        bang = None
        if group[at + 1].type == tokenize.OP and group[at + 1].string == "!":  # Python 3.12+
            bang = group[at + 1]
        elif group[at + 1].type == tokenize.ERRORTOKEN:
            for token in group[at + 1:]:
                if token.type != tokenize.ERRORTOKEN:
                    break
                if token.string == "!":
                    bang = token
                    break
                if not token.string.isspace():
                    break
        if bang is not None:
            line, column = bang.start[0] - 1, bang.start[1]
            return _Found(line, column, 10, lambda lines: (line, _continued_end(lines, line)))
    return None


def _escaped_command(groups, lines) -> Optional[_Found]:
    for group in groups:
        first = next((t for t in group if t.type not in (tokenize.INDENT, tokenize.DEDENT)), None)
        if first is not None and first.string in _ESCAPE_SINGLES:
            line, column = first.start[0] - 1, first.start[1]

            def transform(lines, line=line, column=column):
                end = _continued_end(lines, line)
                text = _joined(lines, line, column, end)
                if text.startswith("/") and not text[1:].partition(" ")[0]:
                    raise SyntaxError("'/' must be followed by a callable name")
                return line, end
            return _Found(line, column, 10, transform)
    return None


def _help_end(groups, lines) -> Optional[_Found]:
    for group in groups:
        if len(group) > 2 and group[-2].string == "?":
            first = next(t for t in group if t.type not in (tokenize.INDENT, tokenize.DEDENT))
            line, column = first.start[0] - 1, first.start[1]
            last = group[-2].start[0] - 1

            def transform(lines, line=line, column=column, last=last):
                if not _HELP_END.search("".join(lines[line:last + 1])[column:]):
                    raise SyntaxError("not a help request")
                return line, last
            return _Found(line, column, 5, transform)
    return None


_FINDERS = (_magic_assign, _system_assign, _escaped_command, _help_end)
_TRANSFORM_LIMIT = 500  # as IPython's TRANSFORM_LOOP_LIMIT


def _compiled(text: str) -> Optional[ast.Module]:
    try:
        return compile(text, "<cell>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                       dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
        return None


def _special_spans(lines: List[str]) -> List[Tuple[int, int]]:
    """The (first, last) lines of each IPython construct of cleaned-up cell lines that are
    not Python (Python has none of IPython's special syntax)."""
    lines = list(lines)
    spans: List[Tuple[int, int]] = []
    for _ in range(_TRANSFORM_LIMIT):
        try:
            groups = _tokens_by_line(lines)
        except (tokenize.TokenError, SyntaxError, ValueError):  # IPython fails too: no more
            break
        found = sorted(filter(None, (finder(groups, lines) for finder in _FINDERS)),
                       key=lambda f: (f.line, f.column, f.priority))
        for candidate in found:
            try:
                first, last = candidate.transform(lines)
            except SyntaxError:
                continue
            spans.append((first, last))
            # What IPython puts there is one simple statement at the line's indentation.
            indent = lines[first][:len(lines[first]) - len(lines[first].lstrip(" \t"))]
            lines[first:last + 1] = [indent + MAGIC_PLACEHOLDER + "\n"] * (last - first + 1)
            break
        else:
            break
    return spans


# -- a cell -------------------------------------------------------------------------------


def cell_lines(source: str) -> CellLines:
    """The cell's lines as Python, following IPython's TransformerManager.transform_cell.
    Every line ends with a newline (IPython adds one to the last line as well)."""
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    return _transform(lines)


def _not_python(lines: List[str]) -> CellLines:
    return CellLines(list(lines), [CELL_MAGIC] * len(lines), [0] * len(lines), python=False)


def _transform(lines: List[str]) -> CellLines:
    skip = _leading_empty(lines)
    body = lines[skip:]
    shifts = [0] * len(body)
    for step in (_dedent, _doctest_prompts, _ipython_prompts):
        cleaned = step(body)
        if len(cleaned) == len(body):
            shifts = [shift + (len(old) - len(new) if old.endswith(new) else 0)
                      for shift, old, new in zip(shifts, body, cleaned)]
            body = cleaned
    kinds = [PYTHON] * len(body)
    if body and body[0].startswith("%%") and not re.match(r"%%\w+\?", body[0]):
        if body[0][2:].rstrip().partition(" ")[0] not in PYTHON_BODY_CELL_MAGICS:
            return _not_python(lines)
        inner = _transform(body[1:])
        if not inner.python:
            return _not_python(lines)
        body = [MAGIC_PLACEHOLDER + "\n"] + inner.lines
        kinds = [CELL_MAGIC] + inner.kinds
        shifts = [shifts[0]] + [outer + own for outer, own in zip(shifts[1:], inner.shifts)]
    else:
        tree = _compiled("".join(body))
        if tree is not None:  # Python: nothing of IPython's
            if skip == 0 and not any(shifts):
                return CellLines(list(lines), kinds, shifts, tree=tree)
            spans = []
        else:
            spans = _special_spans(body)
        for first, last in spans:
            kinds[first] = SPECIAL
            kinds[first + 1:last + 1] = [CONTINUED] * (last - first)
            indent = body[first][:len(body[first]) - len(body[first].lstrip(" \t"))]
            body[first:last + 1] = [indent + MAGIC_PLACEHOLDER + "\n"] * (last - first + 1)
    for index, line in enumerate(body):  # a whitespace-only line is blank to Python: as written
        if kinds[index] == PYTHON and lines[skip + index].isspace():
            body[index], shifts[index] = lines[skip + index], 0
    return CellLines(lines[:skip] + body, [PYTHON] * skip + kinds, [0] * skip + shifts)
