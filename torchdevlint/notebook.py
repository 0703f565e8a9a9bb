"""Jupyter notebooks as one Python program, and back.

The code cells are joined, in order, into one program (so names defined in an earlier cell are
known in later ones), each preceded by a marker comment line. The lines that IPython does not
run as Python (``%magic``, ``!shell``, ``x = !cmd``, ``?obj`` / ``obj?`` help, ... found as
IPython finds them: ``torchdevlint.ipysyntax``) are replaced line for line by a placeholder
statement, so program lines map straight back to cell lines; where IPython's cleanup takes
characters from the start of a line (an indentation common to the whole cell, ``>>>``
prompts), columns map back by adding them. A ``%%cell_magic`` cell whose body is not Python
(``%%bash``, ``%%html``, ...) is left out; the body of ``%%time``, ``%%timeit``, ``%%capture``
and ``%%prun`` is Python.

For ``--fix``: :meth:`Notebook.with_program` takes a fixed program, splits it at the markers,
puts the magic lines back, and rewrites only the cells whose source changed, keeping outputs,
metadata and the file's JSON layout (indent, key order, escaping, trailing newline).

Cells are numbered as current ruff does: the 1-based position among all the notebook's cells
(markdown included), which is what notebook front ends count.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from torchdevlint.findings import Finding
from torchdevlint.ipysyntax import MAGIC_PLACEHOLDER, cell_lines
from torchdevlint.textsearch import names_a_gpu

SUFFIX = ".ipynb"
CELL_MARKER = "# torchdevlint: cell {number}\n"
_CELL_MARKER = re.compile(r"^# torchdevlint: cell (\d+)$")


class NotebookError(Exception):
    """Not a notebook torchdevlint can read; ``str(err)`` is the user-facing reason."""


@dataclass
class _CodeCell:
    number: int  # 1-based position among all cells
    index: int  # position in the notebook's "cells"
    source: str
    first_line: int = 0  # program line of the cell's first line (after its marker)
    python_lines: List[str] = field(default_factory=list)  # the cell's lines in the program
    shifts: List[int] = field(default_factory=list)  # characters IPython takes from each start
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
        has_non_ascii = not text.isascii()
        return cls(indent, (comma, colon), ensure_ascii=not has_non_ascii and "\\u" in text,
                   trailing_newline=text.endswith("\n"),
                   newline="\r\n" if "\r\n" in text else "\n")

    def dump(self, document: Any) -> str:
        text = json.dumps(document, indent=self.indent, separators=self.separators,
                          ensure_ascii=self.ensure_ascii)
        if self.trailing_newline:
            text += "\n"
        return text.replace("\n", self.newline) if self.newline != "\n" else text


def _displayed_expression(python_lines: List[str],
                          tree: Optional[ast.Module] = None) -> Optional[Tuple[int, int]]:
    """Lines (1-based, in the cell) of a last expression statement Jupyter displays (``tree``:
    theirs, where already parsed)."""
    try:
        tree = tree or ast.parse("".join(python_lines))
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
        self.shifts: List[int] = [0]  # program line -> characters before its column 1 in the cell
        program: List[str] = []
        for index, cell in enumerate(document["cells"]):
            if cell.get("cell_type") != "code":
                continue
            number = index + 1
            source = _cell_source(cell)
            code_cell = _CodeCell(number, index, source)
            python = cell_lines(source)
            if not python.python:  # %%bash, %%html, ...: not Python
                continue
            python_lines = code_cell.python_lines = python.lines
            code_cell.shifts = python.shifts
            program.append(CELL_MARKER.format(number=number))
            self.line_map.append((number, 0))
            self.shifts.append(0)
            code_cell.first_line = len(self.line_map)
            displayed = _displayed_expression(python_lines, python.tree)
            if displayed is not None:
                code_cell.displayed = (displayed[0] + code_cell.first_line - 1,
                                       displayed[1] + code_cell.first_line - 1)
            program.extend(python_lines)
            self.line_map.extend((number, line) for line in range(1, len(python_lines) + 1))
            self.shifts.extend(code_cell.shifts)
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

    def shift(self, program_line: int) -> int:
        """Characters IPython's cleanup took from the start of this line (the cell's common
        indentation, a ``>>>`` prompt): a program column plus this is the cell's column."""
        return self.shifts[program_line] if 0 < program_line < len(self.shifts) else 0

    def prefix(self, program_line: int) -> str:
        """The text IPython's cleanup took from the start of this line (``shift`` characters)."""
        shift = self.shift(program_line)
        if not shift:
            return ""
        number, line = self.line_map[program_line]
        cell = next(c for c in self.cells if c.number == number)
        return cell.source.splitlines()[line - 1][:shift]

    def is_displayed(self, program_line: int) -> bool:
        """Is this program line part of a cell's last expression, which Jupyter displays?"""
        return any(c.displayed and c.displayed[0] <= program_line <= c.displayed[1] for c in self.cells)

    def to_cells(self, finding: Finding) -> Finding:
        cell, line = self.locate(finding.line)
        column = finding.column + self.shift(finding.line)
        end_line, end_column = finding.end_line, finding.end_column
        if end_line:
            end_cell, end_line = self.locate(finding.end_line)
            if end_cell != cell:
                end_line = line
            elif end_column:
                end_column += self.shift(finding.end_line)
        return replace(finding, cell=cell, line=line, column=column, end_line=end_line,
                       end_column=end_column)

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
            restored = _restore(cell, sources[cell.number].splitlines(keepends=True))
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


def after_cell_marker(program: str, offset: int) -> int:
    """``offset`` (a statement's start, its leading comment lines included) moved past a cell
    marker among those lines, so that text inserted there goes into the statement's cell."""
    position = found = offset
    while position < len(program):
        end = program.find("\n", position)
        end = len(program) if end < 0 else end + 1
        line = program[position:end].strip()
        if line and not line.startswith("#"):
            break
        position = end
        if _CELL_MARKER.match(line):
            found = position
    return found


def _restore(cell: _CodeCell, lines: List[str]) -> List[str]:
    """The cell's lines for its (fixed) lines in the program: a line the fix kept is the
    line as written, a placeholder its IPython line, and a new line gets the characters
    IPython's cleanup took from the line it replaces or follows."""
    original = cell.source.splitlines(keepends=True)
    if original and not original[-1].endswith(("\n", "\r")):
        original[-1] += "\n"  # (taken off again by the caller)
    restored: List[str] = []
    matcher = difflib.SequenceMatcher(None, cell.python_lines, lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            restored.extend(original[i1:i2])
            continue
        # The IPython lines the fix dropped or replaced, in order, for its placeholders.
        dropped = iter([original[i] for i in range(i1, i2)
                        if cell.python_lines[i].strip() == MAGIC_PLACEHOLDER])
        for offset, line in enumerate(lines[j1:j2]):
            if line.strip() == MAGIC_PLACEHOLDER:
                magic = next(dropped, None)
                if magic is None:
                    raise NotebookError(f"cell {cell.number}: cannot put its IPython lines back")
                body = magic.rstrip("\r\n")
                restored.append(body + (magic[len(body):] or line[len(line.rstrip("\r\n")):]))
                continue
            near = i1 + offset if i1 + offset < i2 else i1 - 1
            restored.append(_prefix(cell, original, near) + line if line.strip() else line)
    return restored


def _prefix(cell: _CodeCell, original: List[str], near: int) -> str:
    """What IPython's cleanup took from the start of a written line at or next to ``near``."""
    order = list(range(near, -1, -1)) + list(range(near + 1, len(original)))
    for index in order:
        if 0 <= index < len(original) and cell.shifts[index] and \
                cell.python_lines[index].strip() != MAGIC_PLACEHOLDER:
            return original[index][:cell.shifts[index]]
    return ""


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


def declares_gpu_runtime(document: Dict[str, Any]) -> bool:
    """Whether a notebook says it runs on a GPU: its metadata asks for a GPU runtime (Colab's
    ``"accelerator": "GPU"`` or ``"gpuType"``, what Runtime > Change runtime type writes) and
    its own text says so too: a markdown cell names a GPU or CUDA ("Make sure you're
    running a GPU runtime"), or a cell runs ``!nvidia-smi``. The metadata alone only tells
    where the notebook was last saved from."""
    metadata = document.get("metadata") if isinstance(document, dict) else None
    if not isinstance(metadata, dict):
        return False
    colab = metadata.get("colab")
    if not (str(metadata.get("accelerator", "")).upper() == "GPU" or (
            isinstance(colab, dict) and bool(colab.get("gpuType")))):
        return False
    for cell in document.get("cells") or ():
        if not isinstance(cell, dict):
            continue
        text = _cell_source(cell)
        if cell.get("cell_type") == "markdown" and names_a_gpu(text) or \
                cell.get("cell_type") == "code" and "nvidia-smi" in text:
            return True
    return False


def is_python_notebook(notebook: Notebook) -> bool:
    """False for notebooks of another kernel language (R, Julia, ...), which are not linted."""
    metadata = notebook.document.get("metadata") or {}
    language = (metadata.get("language_info") or {}).get("name") or \
        (metadata.get("kernelspec") or {}).get("language")
    return not isinstance(language, str) or language.lower() in ("python", "python3", "ipython")
