"""Huge modules are linted in parts of whole top-level statements.

LibCST needs about 500 bytes of memory per byte of source, and Python's ``ast`` about 200: a
generated 20 MB module of ``vN = torch.zeros(k) + N`` lines took 18 GB and five minutes to
lint whole, 3.7 GB only to check its syntax. A module of ``LARGE_MODULE_CHARS`` or more is
therefore cut, at top-level statement boundaries found by the tokenizer (a decorator stays
with its definition, ``else``/``except``/``finally`` with their statement), into parts of
about ``PART_CHARS``. Each part is linted on its own, as a module made of the part and its
**prelude**: the import statements and the availability checks (top-level statements naming
``is_available``, such as ``device = "cuda" if torch.cuda.is_available() else "cpu"``) of the
parts before it, so that torch's names and the module's device keep their meaning. The part's
findings are placed back in the file's lines (each part starts at the start of a line, so
columns are unchanged), its fixes built while its tree is alive, and its tree dropped before
the next part: memory is that of one part, whatever the size of the module.

What a part cannot see: a function, class or module-level name defined in another part (a
rule that needs it stays silent, as for any value it cannot tell), and calls made from
another part (handed to the analysis as ``unseen_call_names``, so that reasoning about
"every caller" stays silent). A fix that needs a new module-level definition (``device =
...``) is not offered after the first part. Python's verdict on the syntax is taken part by
part too, with the prelude, so a syntax error is reported at its own line.

Importing this module is cheap (no LibCST): the syntax check of a huge file uses it.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import Counter
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

# Modules this large are linted in parts (a dense 2 MB module peaks at about 2 GB whole).
LARGE_MODULE_CHARS = 2 * 1024 * 1024
# The size a part grows to (whole statements: a single larger statement is a part of its own,
# where huge literal tables are still split, see ``torchdevlint.split``).
PART_CHARS = 128 * 1024
# A prelude statement longer than this is left out of the preludes, and the preludes stop
# growing at PRELUDE_CHARS.
PRELUDE_STATEMENT_CHARS = 4 * 1024
PRELUDE_CHARS = 64 * 1024

# Keywords that continue the statement before them at the same indentation
_CONTINUATIONS = frozenset(("else", "elif", "except", "finally"))
# A function or a class naming ``is_available`` is no module-level availability check
_DEFINITIONS = frozenset(("def", "class", "async", "@"))
_SKIPPED = frozenset((tokenize.NL, tokenize.COMMENT, tokenize.NEWLINE, tokenize.INDENT,
                      tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER))
_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


@dataclass(frozen=True)
class Part:
    start: int  # offsets of the part in the source (``start`` is the start of a line)
    end: int
    line: int  # the 1-based line of ``start``
    prelude: str  # the text analysed before the part (whole lines)

    def text(self, source: str) -> str:
        return self.prelude + source[self.start:self.end]

    @property
    def prelude_lines(self) -> int:
        return self.prelude.count("\n")

    def file_line(self, line: int) -> int:
        """A line of ``text`` as a line of the file (lines of the prelude give <= 0)."""
        return line - self.prelude_lines + self.line - 1


def _statements(source: str) -> Iterator[Tuple[int, str]]:
    """``(line, first word)`` for each top-level statement, in order. Stops at the first
    token the tokenizer rejects: what follows belongs to the last statement found."""
    depth = 0
    at_start = True  # the next significant token starts a logical line
    decorated = False  # the last top-level logical line was a decorator
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    try:
        for token in tokens:
            kind = token.type
            if kind == tokenize.INDENT:
                depth += 1
            elif kind == tokenize.DEDENT:
                depth -= 1
            if kind == tokenize.NEWLINE:
                at_start = True
                continue
            if kind in _SKIPPED:
                continue
            if at_start:
                at_start = False
                if depth == 0:
                    if not decorated and not (kind == tokenize.NAME and token.string in _CONTINUATIONS):
                        yield token.start[0], token.string
                    decorated = token.string == "@"
    except (tokenize.TokenError, SyntaxError):
        return


def plan_parts(source: str, part_chars: Optional[int] = None) -> List[Part]:
    """The parts ``source`` is linted in (of about ``part_chars``, default ``PART_CHARS``),
    covering it from start to end (one part when it cannot be cut: a single statement, or
    lone carriage returns for line breaks)."""
    part_chars = part_chars or PART_CHARS
    if "\r" in source.replace("\r\n", ""):
        return [Part(0, len(source), 1, "")]  # (the tokenizer's lines and Python's differ)
    starts = [0]  # offsets of the lines
    for text in io.StringIO(source):
        starts.append(starts[-1] + len(text))
    statements = list(_statements(source))
    parts: List[Part] = []
    prelude: List[str] = []  # for the parts to come
    prelude_size = 0
    opened: Optional[Tuple[int, int, str]] = None  # the part being grown: start, line, prelude
    for index, (line, word) in enumerate(statements):
        start = starts[line - 1]
        end = starts[statements[index + 1][0] - 1] if index + 1 < len(statements) else len(source)
        if opened is None:
            opened = (start, line, "".join(prelude)) if parts else (0, 1, "")
        if end == len(source) or end - opened[0] >= part_chars:
            parts.append(Part(opened[0], end, opened[1], opened[2]))
            opened = None
        text = source[start:end]
        if (word in ("import", "from") or
                ("is_available" in text and word not in _DEFINITIONS)) and \
                len(text) <= PRELUDE_STATEMENT_CHARS and prelude_size + len(text) <= PRELUDE_CHARS:
            statement = text.rstrip() + "\n"
            prelude.append(statement)
            prelude_size += len(statement)
    if not parts:
        return [Part(0, len(source), 1, "")]
    return parts


def called_names(text: str) -> Counter:
    """How often each name is followed by ``(`` in ``text``: every name called there (and a
    few more: definitions, keywords), the callers another part's analysis cannot see."""
    return Counter(_CALLED.findall(text))


def syntax_error(source: str, target=None) -> Optional[Tuple[str, int, int]]:
    """``syntax.syntax_error``, taken part by part (each with its prelude) for a huge module,
    whose ast whole would take about 200 bytes per byte of source."""
    from torchdevlint import syntax
    if len(source) < LARGE_MODULE_CHARS:
        return syntax.syntax_error(source, target)
    for part in plan_parts(source):
        error = syntax.checked_tree(part.text(source), target)[1]
        if error is not None:
            message, line, column = error
            return message, max(part.file_line(line), 1), column
    return None
