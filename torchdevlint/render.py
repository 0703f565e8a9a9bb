"""The human-readable text formats, as ruff draws them: colour, ``[*]`` on findings that
``--fix`` fixes, the fixable summary, and ``full``'s source excerpt with a caret under the span
and the fix as a diff.

Colour is plain ANSI: on when the stream is a terminal, never with ``NO_COLOR`` (any non-empty
value, https://no-color.org), always with ``FORCE_COLOR`` (any non-empty value,
https://force-color.org) even into a file or a pipe. ``NO_COLOR`` wins when both are set.
"""

from __future__ import annotations

import os
import re
import unicodedata
from typing import Dict, List, Mapping, Optional, Sequence, TextIO, Tuple

from torchdevlint.findings import Finding

TAB_WIDTH = 4  # a tab is drawn as spaces to the next multiple of this, as ruff does
CONTEXT = 2  # source lines shown above and below a finding
DIFF_CONTEXT = 3

_NEWLINE = re.compile(r"\r\n|\r|\n")

_RESET = "\x1b[0m"
BOLD, CYAN, RED, BLUE, GREEN, DIM = "1", "36", "31", "34", "32", "2"


def colour_enabled(stream: TextIO, environ: Mapping[str, str] = os.environ) -> bool:
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    if environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Style:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *codes: str) -> str:
        if not self.enabled or not text:
            return text
        return f"\x1b[{';'.join(codes)}m{text}{_RESET}"


def fixable_marker(finding: Finding) -> bool:
    """``[*]``: plain ``--fix`` (with the configured unsafe-fixes) fixes this finding."""
    fix = finding.available_fix
    return fix is not None and fix.applicable


def concise_line(finding: Finding, style: Style) -> str:
    """``path:line:col: CODE [*] message`` (``path:cell N:line:col`` in a notebook)."""
    sep = style(":", CYAN)
    cell = f"cell {finding.cell}{sep}" if finding.cell is not None else ""
    marker = f"{style('[*]', CYAN)} " if fixable_marker(finding) else ""
    return (f"{style(finding.path, BOLD)}{sep}{cell}{finding.line}{sep}{finding.column}{sep} "
            f"{style(finding.code, RED, BOLD)} {marker}{finding.message}")


def fix_summary(findings: Sequence[Finding], style: Style) -> Optional[str]:
    """ruff's closing line about fixes: what ``--fix`` would fix, and the unsafe fixes that
    only ``--unsafe-fixes`` applies; None when there are neither."""
    fixable = sum(fixable_marker(f) for f in findings)
    hidden = sum(f.available_fix is not None and not f.available_fix.applicable for f in findings)
    hint = (f"{hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the "
            f"`--unsafe-fixes` option")
    if fixable:
        line = f"{style('[*]', CYAN)} {fixable} fixable with the `--fix` option"
        return f"{line} ({hint})." if hidden else f"{line}."
    return f"No fixes available ({hint})." if hidden else None


# -- full: the source around the finding ---------------------------------------------------


class Sources:
    """The text a finding's rows count in, read when first needed: the file, or in a notebook
    the cell. ``given``: contents not on disk (standard input), by the path shown."""

    def __init__(self, given: Optional[Dict[str, bytes]] = None) -> None:
        self.given = given if given is not None else {}  # (filled as standard input is read)
        self._texts: Dict[Tuple[str, Optional[int]], Optional[str]] = {}

    def text(self, path: str, cell: Optional[int] = None) -> Optional[str]:
        key = (path, cell)
        if key not in self._texts:
            self._texts[key] = self._read(path, cell)
        return self._texts[key]

    def _read(self, path: str, cell: Optional[int]) -> Optional[str]:
        data = self.given.get(path)
        try:
            if data is None:
                with open(path, "rb") as handle:
                    data = handle.read()
            if cell is None:
                from torchdevlint.source import decode_source
                return decode_source(data).text
            from torchdevlint.notebook import parse_notebook
            notebook = parse_notebook(data)
        except Exception:  # gone, unreadable or not decodable: the finding is shown without it
            return None
        return next((c.source for c in notebook.cells if c.number == cell), None)


def split_lines(text: str) -> List[str]:
    """Lines without their ends, split as LibCST counts rows (a final newline ends the last
    line rather than starting another)."""
    lines = _NEWLINE.split(text)
    return lines[:-1] if len(lines) > 1 and lines[-1] == "" else lines


def _char_width(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def display(line: str) -> Tuple[str, List[int]]:
    """The line as drawn (tabs expanded, control characters as their symbols) and the display
    column at which each of its characters starts, plus one entry for the end."""
    out: List[str] = []
    starts: List[int] = []
    width = 0
    for char in line:
        starts.append(width)
        if char == "\t":
            spaces = TAB_WIDTH - width % TAB_WIDTH
            out.append(" " * spaces)
            width += spaces
        elif ord(char) < 32 or ord(char) == 127:
            out.append(chr(0x2400 + ord(char)) if ord(char) < 32 else "\u2421")
            width += 1
        else:
            out.append(char)
            width += _char_width(char)
    starts.append(width)
    return "".join(out), starts


def _column(starts: List[int], column: int) -> int:
    """Display column of a 1-based character column (clamped to the line)."""
    return starts[min(max(column, 1), len(starts)) - 1]


def snippet(finding: Finding, text: str, style: Style) -> List[str]:
    """ruff's excerpt: the lines of the span and ``CONTEXT`` around them, with carets."""
    lines = split_lines(text)
    first = finding.line
    if not 1 <= first <= len(lines):
        return []
    last = min(max(finding.end_line or first, first), len(lines))
    end_column = finding.end_column if finding.end_line else finding.column
    shown = range(max(1, first - CONTEXT), min(len(lines), last + CONTEXT) + 1)
    width = len(str(shown[-1]))
    multi = last > first
    gutter = lambda number="": style(f"{number:>{width}} |", BLUE, BOLD)  # noqa: E731
    out = [gutter()]
    drawn = {number: display(lines[number - 1]) for number in shown}
    start_col = _column(drawn[first][1], finding.column)
    at_indent = lines[first - 1][:finding.column - 1].strip() == ""
    for number in shown:
        body, starts = drawn[number]
        mark = ""
        if multi:
            if number == first:
                mark = "/ " if at_indent else "  "
            elif first < number <= last:
                mark = "| "
            else:
                mark = "  "
            mark = style(mark, RED, BOLD)
        out.append(f"{gutter(number)} {mark}{body}".rstrip())
        if multi and number == first and not at_indent:
            out.append(f"{gutter()} {style(' ' + '_' * (start_col + 1) + '^', RED, BOLD)}")
        if not multi and number == first:
            end = max(_column(starts, end_column), start_col + 1) if end_column > finding.column \
                else start_col + 1
            carets = "^" * (end - start_col)
            out.append(f"{gutter()} {' ' * start_col}{style(carets + ' ' + finding.code, RED, BOLD)}")
        if multi and number == last:
            last_char = max(_column(starts, end_column) - 1, 0)
            out.append(f"{gutter()} {style('|' + '_' * (last_char + 1) + '^ ' + finding.code, RED, BOLD)}")
    out.append(gutter())
    return out


# -- full: the fix as a diff ---------------------------------------------------------------


def apply_located(text: str, edits) -> str:
    """``text`` with ``EditLocation`` edits (rows and columns in it) applied, the way the
    fixer applies a fix's edits: a shared edit once, insertions before a replacement at the
    same place."""
    starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]

    def offset(row: int, column: int) -> int:
        if row > len(starts):
            return len(text)
        line_end = starts[row] if row < len(starts) else len(text)
        return min(starts[max(row, 1) - 1] + max(column, 1) - 1, line_end)

    unique = []
    for edit in edits:
        if edit not in unique:
            unique.append(edit)
    spans = sorted((offset(e.row, e.column), offset(e.end_row, e.end_column), index, e.content)
                   for index, e in enumerate(unique))
    pieces, position = [], 0
    for start, end, _, content in spans:
        pieces.append(text[position:start])
        pieces.append(content)
        position = max(end, start)
    pieces.append(text[position:])
    return "".join(pieces)


def fix_diff(old: str, new: str, style: Style, title: str) -> List[str]:
    """ruff's fix diff: ``old new |-`` / ``|+`` lines with both line numbers."""
    import difflib  # only when a fix is shown
    before, after = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    groups = list(matcher.get_grouped_opcodes(DIFF_CONTEXT))
    if not groups:
        return []
    width = len(str(max(len(before), len(after), 1)))
    blank = " " * width
    out = [f"\u2139 {style(title, BLUE)}"]
    for index, group in enumerate(groups):
        if index:
            out.append("-" * 80)
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for k in range(i2 - i1):
                    out.append(style(f"{i1 + k + 1:<{width}} {j1 + k + 1:<{width}} | "
                                     f"{display(before[i1 + k])[0]}".rstrip(), DIM))
                continue
            for k in range(i1, i2):
                out.append(style(f"{k + 1:<{width}} {blank} |-{display(before[k])[0]}", RED))
            for k in range(j1, j2):
                out.append(style(f"{blank} {k + 1:<{width}} |+{display(after[k])[0]}", GREEN))
    return out


def full_block(finding: Finding, sources: Sources, style: Style) -> List[str]:
    """A finding as ``--output-format full`` shows it: the concise line, the excerpt, the
    fix's description and its diff, then a blank line."""
    out = [concise_line(finding, style)]
    text = sources.text(finding.path, finding.cell)
    if text is not None:
        out.extend(snippet(finding, text, style))
    fix = finding.available_fix
    if fix is not None:
        out.append(f"{' ' * 2}{style('=', BLUE, BOLD)} {style('help', BOLD)}: {fix.description}")
        title = "Safe fix" if fix.safe else "Unsafe fix"
        cells = sorted({edit.cell for edit in fix.located}, key=lambda c: c or 0)
        for cell in cells:
            old = sources.text(finding.path, cell)
            if old is None:
                continue
            new = apply_located(old, [e for e in fix.located if e.cell == cell])
            diff = fix_diff(old, new, style, title if cell is None else f"{title} (cell {cell})")
            if diff:
                out.append("")
                out.extend(diff)
    out.append("")
    return out
