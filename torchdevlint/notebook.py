"""Jupyter notebooks as one Python program, and back.

The code cells are joined, in order, into one program (so names defined in an earlier cell are
known in later ones), each preceded by a marker comment line. IPython syntax that is not Python
(``%magic``, ``!shell``, ``x = !cmd``, ``?obj`` / ``obj?`` help) is replaced line for line by a
placeholder statement, so positions in the program map straight back to cell lines; a cell
starting with a ``%%cell_magic`` is not Python and is left out.

For ``--fix``: :meth:`Notebook.with_program` takes a fixed program, splits it at the markers,
puts the magic lines back, and rewrites only the cells whose source changed, keeping outputs,
metadata and the file's JSON layout (indent, key order, escaping, trailing newline).

Cells are numbered as current ruff does: the 1-based position among all the notebook's cells
(markdown included), which is what notebook front ends count.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from torchdevlint.findings import Finding

SUFFIX = ".ipynb"
CELL_MARKER = "# torchdevlint: cell {number}\n"
_CELL_MARKER = re.compile(r"^# torchdevlint: cell (\d+)$")
MAGIC_PLACEHOLDER = "pass  # torchdevlint: ipython"

_LINE_MAGIC = re.compile(r"^\s*(?:%|!|\?)")  # %time, !pip, ?obj
_ASSIGNED_MAGIC = re.compile(r"^\s*[\w.]+(?:\s*,\s*[\w.]+)*\s*=\s*[%!]")  # files = !ls
_HELP_SUFFIX = re.compile(r"^\s*[A-Za-z_][\w.]*\?{1,2}\s*$")  # obj? / obj??
_CELL_MAGIC = re.compile(r"^\s*%%")


class NotebookError(Exception):
    """Not a notebook torchdevlint can read; ``str(err)`` is the user-facing reason."""


@dataclass
class _CodeCell:
    number: int  # 1-based position among all cells
    index: int  # position in the notebook's "cells"
    source: str
    first_line: int = 0  # program line of the cell's first line (after its marker)
    magic_lines: List[str] = field(default_factory=list)  # original lines, in order
    displayed: Optional[Tuple[int, int]] = None  # program lines of the displayed last expression


@dataclass
class JsonLayout:
    """How the notebook file was written, to write it back the same way."""

    indent: Optional[int]
    separators: Tuple[str, str]
    ensure_ascii: bool
    trailing_newline: bool
    newline: str

    @classmethod
    def detect(cls, text: str) -> "JsonLayout":
        match = re.search(r"^\{\r?\n( *)\S", text)
        indent = len(match.group(1)) if match else None
        compact = re.search(r'"\s*:\s?', text)
        colon = ": " if compact is None or compact.group(0).endswith(" ") else ":"
        comma = "," if indent is not None or not re.search(r",\s", text) else ", "
        has_non_ascii = any(ord(char) > 127 for char in text)
        return cls(indent, (comma, colon), ensure_ascii=not has_non_ascii and "\\u" in text,
                   trailing_newline=text.endswith("\n"),
                   newline="\r\n" if "\r\n" in text else "\n")

    def dump(self, document: Any) -> str:
        text = json.dumps(document, indent=self.indent, separators=self.separators,
                          ensure_ascii=self.ensure_ascii)
        if self.trailing_newline:
            text += "\n"
        return text.replace("\n", self.newline) if self.newline != "\n" else text


def _is_magic(line: str) -> bool:
    stripped = line.lstrip()
    if not stripped or stripped.startswith("#"):
        return False
    return bool(_LINE_MAGIC.match(line) or _ASSIGNED_MAGIC.match(line) or _HELP_SUFFIX.match(line))


def _to_python(source: str) -> Tuple[List[str], List[str]]:
    """The cell's lines with IPython-only lines replaced (same count), and those lines."""
    lines = source.splitlines(keepends=True)
    out: List[str] = []
    magics: List[str] = []
    continued = False
    for line in lines:
        body = line.rstrip("\r\n")
        if continued or _is_magic(body):
            indent = body[: len(body) - len(body.lstrip())]
            out.append(indent + MAGIC_PLACEHOLDER + line[len(body):])
            magics.append(line)
            continued = body.endswith("\\")  # a magic goes on over backslash-continued lines
        else:
            out.append(line)
    return out, magics


def _displayed_expression(python_lines: List[str]) -> Optional[Tuple[int, int]]:
    """Lines (1-based, in the cell) of a last expression statement Jupyter displays."""
    try:
        tree = ast.parse("".join(python_lines))
    except (SyntaxError, ValueError):
        return None
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return None
    last = tree.body[-1]
    end_line = last.end_lineno or last.lineno
    line = python_lines[end_line - 1]
    rest = line.encode("utf-8")[last.end_col_offset or 0:].decode("utf-8", "replace")
    following = rest + "".join(python_lines[end_line:])
    code = "\n".join(part.split("#", 1)[0] for part in following.splitlines()).strip()
    if code.startswith(";"):  # a trailing semicolon hides the value
        return None
    return last.lineno, end_line


def _cell_source(cell: Dict[str, Any]) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


class Notebook:
    def __init__(self, text: str, document: Dict[str, Any]) -> None:
        self.text = text
        self.document = document
        self.layout = JsonLayout.detect(text)
        self.cells: List[_CodeCell] = []
        self.line_map: List[Tuple[int, int]] = [(0, 0)]  # program line -> (cell, line); 1-based
        program: List[str] = []
        for index, cell in enumerate(document["cells"]):
            if cell.get("cell_type") != "code":
                continue
            number = index + 1
            source = _cell_source(cell)
            code_cell = _CodeCell(number, index, source)
            if _CELL_MAGIC.match(source.lstrip("\n")):  # %%bash, %%timeit, ...: not Python
                continue
            python_lines, code_cell.magic_lines = _to_python(source)
            if python_lines and not python_lines[-1].endswith(("\n", "\r")):
                python_lines[-1] += "\n"
            program.append(CELL_MARKER.format(number=number))
            self.line_map.append((number, 0))
            code_cell.first_line = len(self.line_map)
            displayed = _displayed_expression(python_lines)
            if displayed is not None:
                code_cell.displayed = (displayed[0] + code_cell.first_line - 1,
                                       displayed[1] + code_cell.first_line - 1)
            program.extend(python_lines)
            self.line_map.extend((number, line) for line in range(1, len(python_lines) + 1))
            self.cells.append(code_cell)
        self.program = "".join(program)

    # -- positions --------------------------------------------------------------------------

    def locate(self, program_line: int) -> Tuple[int, int]:
        """(cell number, line in cell) of a program line; a marker line maps to the next cell."""
        if 0 < program_line < len(self.line_map):
            cell, line = self.line_map[program_line]
            return (cell, line) if line else (cell, 1)
        cell = self.cells[-1].number if self.cells else 1
        return cell, max(1, program_line - (self.cells[-1].first_line - 1 if self.cells else 0))

    def is_displayed(self, program_line: int) -> bool:
        """Is this program line part of a cell's last expression, which Jupyter displays?"""
        return any(c.displayed and c.displayed[0] <= program_line <= c.displayed[1] for c in self.cells)

    def to_cells(self, finding: Finding) -> Finding:
        cell, line = self.locate(finding.line)
        end_line = finding.end_line
        if end_line:
            end_cell, end_line = self.locate(end_line)
            if end_cell != cell:
                end_line = line
        return replace(finding, cell=cell, line=line, end_line=end_line)

    def map_findings(self, findings: Iterable[Finding],
                     displayed_codes: Sequence[str] = ("TDL001",)) -> List[Finding]:
        """Findings in cell coordinates, without discarded-value reports on displayed values."""
        return [self.to_cells(f) for f in findings
                if not (f.code in displayed_codes and self.is_displayed(f.line))]

    # -- writing back ----------------------------------------------------------------------

    def split_program(self, program: str) -> Dict[int, str]:
        """Cell number -> Python source of that cell, from a (fixed) program."""
        sources: Dict[int, List[str]] = {}
        current: Optional[List[str]] = None
        before_first: List[str] = []  # a fix may insert lines at the very top: cell 1 gets them
        for line in program.splitlines(keepends=True):
            match = _CELL_MARKER.match(line.rstrip("\r\n"))
            if match:
                current = sources.setdefault(int(match.group(1)), [])
                if before_first:
                    current.extend(before_first)
                    before_first = []
            elif current is not None:
                current.append(line)
            else:
                before_first.append(line)
        expected = [cell.number for cell in self.cells]
        if list(sources) != expected:
            raise NotebookError("the fixed program lost its cell markers; the notebook was left as it was")
        return {number: "".join(lines) for number, lines in sources.items()}

    def with_program(self, program: str) -> Tuple[str, List[int]]:
        """The notebook's new text for a fixed program, and the numbers of the changed cells."""
        sources = self.split_program(program)
        changed: List[int] = []
        for cell in self.cells:
            lines = sources[cell.number].splitlines(keepends=True)
            magics = iter(cell.magic_lines)
            restored = []
            for line in lines:
                if line.strip() == MAGIC_PLACEHOLDER:
                    original = next(magics, None)
                    if original is None:
                        raise NotebookError(f"cell {cell.number}: cannot put its IPython lines back")
                    body = original.rstrip("\r\n")
                    line = body + (original[len(body):] or line[len(line.rstrip("\r\n")):])
                restored.append(line)
            text = "".join(restored)
            if not cell.source.endswith(("\n", "\r")) and text.endswith("\n"):
                text = text[:-1]
            if text == cell.source:
                continue
            changed.append(cell.number)
            raw = self.document["cells"][cell.index]
            raw["source"] = text if isinstance(raw.get("source"), str) else text.splitlines(keepends=True)
        if not changed:
            return self.text, []
        return self.layout.dump(self.document), changed


def displayed_lines(program: str) -> set:
    """Program lines of the cells' displayed last expressions, from a program's text alone
    (--fix re-lints a changing program, whose lines move between passes)."""
    segments: List[Tuple[int, List[str]]] = []
    for number, line in enumerate(program.splitlines(keepends=True), start=1):
        if _CELL_MARKER.match(line.rstrip("\r\n")):
            segments.append((number + 1, []))
        elif segments:
            segments[-1][1].append(line)
    lines: set = set()
    for first, cell_lines in segments:
        displayed = _displayed_expression(cell_lines)
        if displayed is not None:
            lines.update(range(displayed[0] + first - 1, displayed[1] + first))
    return lines


def displayed_filter(program: str, findings: List[Finding],
                     displayed_codes: Sequence[str] = ("TDL001",)) -> List[Finding]:
    """``findings`` (in program lines) without discarded-value reports on displayed values."""
    if not any(f.code in displayed_codes for f in findings):
        return findings
    shown = displayed_lines(program)
    return [f for f in findings if not (f.code in displayed_codes and f.line in shown)]


def parse_notebook(data: bytes) -> Notebook:
    """Read a notebook file; raises NotebookError with one clear reason."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"notebook is not valid UTF-8: {exc.reason}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"notebook is not valid JSON: {exc.msg} (line {exc.lineno}, "
                            f"column {exc.colno})") from None
    if not isinstance(document, dict):
        raise NotebookError("not a Jupyter notebook: the top level is not a JSON object")
    major = document.get("nbformat")
    if "worksheets" in document or (isinstance(major, int) and major < 4):
        raise NotebookError(f"nbformat {major} notebooks are not supported; upgrade it with "
                            f"`jupyter nbconvert --to notebook --nbformat 4`")
    cells = document.get("cells")
    if not isinstance(cells, list):
        raise NotebookError("not a Jupyter notebook: no \"cells\" list")
    for position, cell in enumerate(cells, start=1):
        source = cell.get("source") if isinstance(cell, dict) else None
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str) or not (
                isinstance(source, str) or (isinstance(source, list)
                                            and all(isinstance(s, str) for s in source))):
            raise NotebookError(f"not a Jupyter notebook: cell {position} has no cell_type or source")
    return Notebook(text, document)


def is_python_notebook(notebook: Notebook) -> bool:
    """False for notebooks of another kernel language (R, Julia, ...), which are not linted."""
    metadata = notebook.document.get("metadata") or {}
    language = (metadata.get("language_info") or {}).get("name") or \
        (metadata.get("kernelspec") or {}).get("language")
    return not isinstance(language, str) or language.lower() in ("python", "python3", "ipython")
