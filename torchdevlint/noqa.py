"""``# noqa`` handling, identical to flake8's so that every front end agrees.

flake8 searches its inline regex in the group of physical lines a finding is on (lines joined
by a backslash or spanned by a multi-line string count as one; see ``line_groups``), and skips
a file with a ``# flake8: noqa`` line. ruff's file-level exemption is honoured too: ``# ruff:
noqa`` skips the file, ``# ruff: noqa: TDL001, TDL004`` silences those codes in all of it
(``file_exemption``; under flake8, which knows only its own form, the plugin applies it).
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from torchdevlint.syntax import BLOCK_FIELDS

# Same patterns as flake8.defaults.
NOQA_INLINE = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
NOQA_FILE = re.compile(r"\s*# flake8[:=]\s*noqa", re.IGNORECASE)
# ruff's: a comment line ``# ruff: noqa`` (every code) or ``# ruff: noqa: CODES``.
RUFF_NOQA_FILE = re.compile(r"\s*#\s*ruff\s*:\s*noqa(?::\s*(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?\s*$",
                            re.IGNORECASE)
_SEPARATOR = re.compile(r"[,\s]")


_ANY_NOQA = re.compile(r"# noqa", re.IGNORECASE)
_ANY_FILE_NOQA = re.compile(r"# flake8[:=]|#\s*ruff\s*:", re.IGNORECASE)


def may_suppress(text: str) -> bool:
    """False when no line of ``text`` has a ``# noqa`` (then tokenizing is not needed)."""
    return _ANY_NOQA.search(text) is not None


def may_exempt_file(text: str) -> bool:
    """False when no line can be a ``# flake8: noqa`` or ``# ruff: noqa`` (then splitting
    lines is not needed)."""
    return _ANY_FILE_NOQA.search(text) is not None


def file_exemption(lines: List[str], flake8_form: bool = True) -> Optional[frozenset]:
    """What the file-level comments exempt the whole file from, as ``_noqa_codes`` says it:
    None (nothing), a set holding "*" (every code: ``# flake8: noqa``, ``# ruff: noqa``), or
    the codes of its ``# ruff: noqa: CODES`` lines. ``flake8_form=False``: flake8's own form
    is left to flake8 (the plugin)."""
    codes: set = set()
    for line in lines:
        if flake8_form and NOQA_FILE.match(line):
            return frozenset(_BLANKET)
        match = RUFF_NOQA_FILE.match(line)
        if match is not None:
            if match.group("codes") is None:
                return frozenset(_BLANKET)
            codes.update(c for c in _SEPARATOR.split(match.group("codes")) if c)
    return frozenset(codes) if codes else None


def exempt_findings(findings: list, exemption: Optional[frozenset]) -> list:
    """``findings`` without those a ``file_exemption`` silences."""
    return [f for f in findings if not _silences(f.code, exemption)]


def split_lines(text: str) -> List[str]:
    """Lines as flake8 sees them (universal newlines, each ending in "\\n")."""
    return io.StringIO(text.replace("\r\n", "\n").replace("\r", "\n")).readlines()


def tokens_of(lines: List[str]) -> Optional[List[tokenize.TokenInfo]]:
    """``lines``' tokens, or None when they do not tokenize (then no group is known)."""
    try:
        return list(tokenize.generate_tokens(iter(lines).__next__))
    except (tokenize.TokenError, SyntaxError):
        return None


def line_groups(tokens: Iterable[tokenize.TokenInfo], line_count: int) -> Iterator[Tuple[int, int]]:
    """(first, last) of each run of physical lines searched as one for a ``# noqa``, as
    flake8 groups them: lines joined by a backslash or spanned by a multi-line string (each
    line of a bracketed expression is a group of its own)."""
    low, high = line_count + 2, -1
    for kind, _, (start, _), (end, _), _ in tokens:
        if kind in (tokenize.ENDMARKER, tokenize.DEDENT):
            continue
        low, high = min(low, start), max(high, end)
        if kind in (tokenize.NL, tokenize.NEWLINE):
            yield low, high
            low, high = line_count + 2, -1


def _logical_line_map(lines: List[str]) -> Dict[int, str]:
    mapping: Dict[int, str] = {}
    tokens = tokens_of(lines)
    if tokens is None:
        return mapping
    for low, high in line_groups(tokens, len(lines)):
        joined = "".join(lines[low - 1: high])
        for number in range(low, high + 1):
            mapping[number] = joined
    return mapping


_BLANKET = "*"


def _noqa_codes(line_text: Optional[str]) -> Optional[frozenset]:
    """None: no ``# noqa``; a set holding "*": a blanket one; else the codes it names."""
    if not line_text:
        return None
    match = NOQA_INLINE.search(line_text)
    if match is None:
        return None
    codes_text = match.group("codes")
    if codes_text is None:
        return frozenset(_BLANKET)
    return frozenset(c for c in _SEPARATOR.split(codes_text) if c)


def is_blanket(codes: frozenset) -> bool:
    """A ``# noqa`` (or file exemption) for every code."""
    return _BLANKET in codes


def _silences(code: str, codes: Optional[frozenset]) -> bool:
    if codes is None:
        return False
    if _BLANKET in codes:
        return True
    return code in codes or code.startswith(tuple(codes))


def _start(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", None)
    return min([node.lineno, *(d.lineno for d in decorators)]) if decorators else node.lineno


def _children(node: ast.AST) -> Iterator[ast.AST]:
    """The statements (and ``except`` clauses) of ``node``'s blocks; a ``case`` clause, which
    has no position, gives its own statements."""
    for name in BLOCK_FIELDS:
        for child in getattr(node, name, None) or ():
            if hasattr(child, "lineno"):
                yield child
            else:
                yield from _children(child)


def group_bounds(tree: ast.AST, line: int) -> Tuple[int, int]:
    """Lines that hold flake8's group of ``line`` (see ``line_groups``), from Python's ast,
    without tokenizing: lines are grouped by a string token over several lines or by a
    backslash, and both stay within one logical line, which lies within the innermost
    statement (or ``except`` clause) whose lines hold ``line``. Where several statements
    share the line (``a = 1; b = (``), the span of all of them. A line in no statement (a
    comment, a blank line) is a group of its own."""
    low = high = line
    node = tree
    while True:
        holding = [child for child in _children(node) if _start(child) <= line <= child.end_lineno]
        if not holding:
            return low, high
        low = min(_start(child) for child in holding)
        high = max(child.end_lineno for child in holding)
        if len(holding) > 1:
            return low, high
        node = holding[0]


class NoqaIndex:
    """Answers "is this finding silenced?" for one file; tokenizes lazily, once.

    With the file's ast (``tree``), a finding whose group cannot hold a ``# noqa`` (no line
    of its innermost statement has one) is answered without tokenizing: the tokenizer is
    Python code, and in a file that has any ``# noqa`` it cost as much as a tenth of a lint
    (200 ms of a 5,000-line script's 1.6 s); most findings are on statements without one."""

    def __init__(self, lines: List[str], tree: Optional[ast.AST] = None) -> None:
        self._lines = lines
        self._map: Optional[Dict[int, str]] = None
        # Per logical line (its joined text is one object shared by all its lines): a long
        # logical line is searched once, not once per finding on it.
        self._codes: Dict[int, Optional[frozenset]] = {}
        self._tree = tree
        self._marked: Optional[List[int]] = None  # lines with a noqa comment, any codes

    def _may_hold_noqa(self, line: int) -> bool:
        if self._marked is None:
            self._marked = [number for number, text in enumerate(self._lines, 1)
                            if _ANY_NOQA.search(text)]
        low, high = group_bounds(self._tree, line)
        lines = self._lines
        while low > 1 and lines[low - 2].rstrip("\n").endswith("\\"):
            low -= 1  # joined to the line before by a backslash
        while high < len(lines) and lines[high - 1].rstrip("\n").endswith("\\"):
            high += 1
        index = bisect.bisect_left(self._marked, low)
        return index < len(self._marked) and self._marked[index] <= high

    def _codes_on(self, line: int) -> Optional[frozenset]:
        if self._map is None:
            self._map = _logical_line_map(self._lines)
        text = self._map.get(line)
        if text is None and 0 < line <= len(self._lines):
            text = self._lines[line - 1]
        key = id(text)  # the text lives in self._map or self._lines: ids stay unique
        if key not in self._codes:
            self._codes[key] = _noqa_codes(text)
        return self._codes[key]

    def suppressed(self, code: str, line: int) -> bool:
        if self._map is None and self._tree is not None and not self._may_hold_noqa(line):
            return False
        return _silences(code, self._codes_on(line))

    def marked_lines(self) -> set:
        """Lines that carry a ``# noqa`` comment for any code (--fix never edits them)."""
        return {number for number in range(1, len(self._lines) + 1)
                if self._codes_on(number) is not None}
