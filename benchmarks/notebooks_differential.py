"""Differential check: the lines torchdevlint reads as Python in notebook cells are the lines
IPython runs as Python.

    python benchmarks/notebooks_differential.py [--lint] DIR [DIR ...] [--show N]

For every code cell of every ``.ipynb`` under the DIRs, IPython's
``TransformerManager().transform_cell`` (the reference; IPython is a test dependency only)
and ``torchdevlint.ipysyntax.cell_lines`` are compared line by line (``disagreement``):
each line torchdevlint calls Python must come out of IPython as the same text (less what
IPython's cleanup takes from its start, which torchdevlint adds back to columns), each line
it calls IPython syntax must be one IPython rewrote (the backslash-continued lines of one
construct are one line in IPython's output), and a ``%%magic`` cell must be a cell magic to
both; the body of one whose body is Python is compared the same way. Cells that IPython
itself cannot transform (it raises) are counted apart. Prints the cells compared and every
disagreement; exit status 1 when there is one. tests/test_ipython_differential.py runs the
same comparison on cells written for each IPython construct.

``--lint`` also lints the DIRs with the command line and counts its ``E999`` (syntax error)
diagnostics on notebooks whose every code cell IPython transforms and compiles: those are
torchdevlint's errors (exit status 1), the others notebooks that do not run in IPython either.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from torchdevlint.ipysyntax import CELL_MAGIC, CONTINUED, PYTHON, SPECIAL, CellLines, \
    cell_lines  # noqa: E402
from torchdevlint.notebook import NotebookError, is_python_notebook, parse_notebook  # noqa: E402

RUN_CELL_MAGIC = "get_ipython().run_cell_magic("


class IPythonRejects(Exception):
    """IPython's transform_cell raised: the cell does not run in IPython either."""


def _blank(line: str) -> str:
    return "\n" if line.isspace() else line


def _cell_magic_body(transformed: str) -> Optional[str]:
    """The body IPython passes to a cell magic (its third argument), from its call."""
    call = ast.parse(transformed).body[0].value
    return ast.literal_eval(call.args[2])


def disagreement(source: str, manager, ours: Optional[CellLines] = None) -> Optional[str]:
    """None where torchdevlint and IPython agree on which lines of ``source`` are Python,
    else what differs. Raises IPythonRejects where IPython cannot transform the cell."""
    try:
        transformed = manager.transform_cell(source)
    except Exception as error:  # SyntaxError, IndentationError, ... from IPython's tokenizing
        raise IPythonRejects(f"{type(error).__name__}: {error}") from None
    if transformed[:1] in (" ", "\t"):
        # a first line indented with no indentation common to every line: IPython 9 leaves it
        # and cannot run the cell (an IndentationError), so there is no reading to agree with
        # (torchdevlint reads such a cell, `` def f():`` then a line at column 1, by IPython
        # 8's rule, the first line's indentation off each line: the notebook ran then)
        try:
            compile(transformed, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                    dont_inherit=True)
        except (SyntaxError, ValueError) as error:
            raise IPythonRejects(f"its transform does not compile: {error}") from None
    ours = cell_lines(source) if ours is None else ours
    if not source:  # an empty cell: one empty line for IPython, no line for torchdevlint
        return None if transformed == "\n" else f"an empty cell, {transformed!r} for IPython"
    got = transformed.splitlines(keepends=True)
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    skip = next((i for i, line in enumerate(lines) if line and not line.isspace()), 0)
    kinds = ours.kinds[skip:]
    if not ours.python or (kinds and kinds[0] == CELL_MAGIC):
        if len(got) != 1 or not got[0].startswith(RUN_CELL_MAGIC):
            return f"torchdevlint: a cell magic; IPython: {transformed!r}"
        if not ours.python:
            return None
        # The body as IPython runs it, compared on its own; and the cell's own lines for it
        # must be the body's (the cleanup of the whole cell, then of the body).
        body = _cell_magic_body(transformed)
        inner = cell_lines(body)
        if [_blank(line) for line in inner.lines] != [_blank(line) for line in ours.lines[skip + 1:]] \
                or inner.kinds != kinds[1:]:
            return f"the body of the cell magic: {ours.lines[skip + 1:]!r}, as a cell {inner.lines!r}"
        return disagreement(body, manager, inner)
    if any(kind == CELL_MAGIC for kind in kinds):
        return "torchdevlint: a cell magic line inside the cell"
    expected: List[Tuple[int, Optional[str]]] = []  # (cell line, Python text or None)
    for index, (line, kind, shift) in enumerate(zip(lines[skip:], kinds, ours.shifts[skip:])):
        if kind == PYTHON:
            expected.append((skip + index, _blank(line[shift:])))
        elif kind == SPECIAL:
            expected.append((skip + index, None))
        elif kind != CONTINUED:
            return f"line {skip + index + 1}: unknown kind {kind!r}"
    if len(expected) != len(got):
        return (f"{len(expected)} logical lines for torchdevlint, {len(got)} for IPython: "
                f"{transformed!r}")
    for (index, text), theirs in zip(expected, got):
        theirs = _blank(theirs)
        if text is not None and theirs != text:
            return f"line {index + 1}: Python {text!r} for torchdevlint, {theirs!r} for IPython"
        if text is None and theirs == _blank(lines[index][ours.shifts[index]:]):
            return f"line {index + 1}: IPython syntax for torchdevlint, Python for IPython"
    return None


def code_cells(root: Path) -> Iterator[Tuple[Path, int, str]]:
    for path in sorted(root.rglob("*.ipynb")):
        yield from code_cells_of(path)


def code_cells_of(path: Path) -> Iterator[Tuple[Path, int, str]]:
    """(path, cell number, source) of a Python notebook's code cells."""
    try:
        notebook = parse_notebook(path.read_bytes())
    except (OSError, NotebookError):
        return  # not a notebook torchdevlint reads (nbformat 3, broken JSON): nothing to compare
    if not is_python_notebook(notebook):
        return
    for number, cell in enumerate(notebook.document["cells"], start=1):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            yield path, number, source if isinstance(source, str) else "".join(source)


def runs_in_ipython(path: Path, manager) -> bool:
    """Whether IPython transforms and compiles every code cell of the notebook."""
    for _, _, source in code_cells_of(path):
        try:
            compile(manager.transform_cell(source), str(path), "exec",
                    ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
        except Exception:
            return False
    return True


def lint_errors(dirs: List[Path], manager) -> Tuple[int, List[str]]:
    """(E999 diagnostics, those on notebooks that run in IPython) of the command line."""
    run = subprocess.run([sys.executable, "-m", "torchdevlint", "--output-format", "json",
                          "--select", "TDL", *map(str, dirs)], capture_output=True, text=True,
                         cwd=ROOT)
    errors = [r for r in json.loads(run.stdout) if r["code"] == "E999"]
    wrong = [f"{r['path']}:cell {r['cell']}:{r['line']}:{r['column']}: {r['message']}"
             for r in errors if runs_in_ipython(Path(r["path"]), manager)]
    return len(errors), wrong


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--show", type=int, default=20, help="disagreements to print")
    parser.add_argument("--lint", action="store_true",
                        help="also lint the DIRs; E999 on a notebook that runs in IPython fails")
    args = parser.parse_args(argv)
    import IPython
    from IPython.core.inputtransformer2 import TransformerManager
    manager = TransformerManager()
    start = time.perf_counter()
    notebooks, compared, rejected, differ = set(), 0, 0, []
    for root in args.dirs:
        for path, number, source in code_cells(root):
            notebooks.add(path)
            try:
                found = disagreement(source, manager)
            except IPythonRejects:
                rejected += 1
                continue
            compared += 1
            if found is not None:
                differ.append((path, number, found, source))
    for path, number, found, source in differ[:args.show]:
        print(f"{path}:cell {number}: {found}\n    {source[:300]!r}")
    print(f"IPython {IPython.__version__}, Python {sys.version.split()[0]}: "
          f"{len(notebooks)} notebooks, {compared} code cells compared "
          f"({rejected} that IPython itself cannot transform left out), "
          f"disagreements: {len(differ)} ({time.perf_counter() - start:.1f} s)")
    wrong: List[str] = []
    if args.lint:
        errors, wrong = lint_errors(args.dirs, manager)
        print("\n".join(wrong[:args.show]))
        print(f"torchdevlint: E999 on {errors} notebooks, {len(wrong)} of them notebooks whose "
              f"every code cell IPython compiles")
    return 1 if differ or wrong else 0


if __name__ == "__main__":
    sys.exit(main())
