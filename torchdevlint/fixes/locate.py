"""Fixes as reports and the cache keep them: built once per file whatever the configuration
says (``EVERY_FIX``), placed in the file's rows and columns, and narrowed to the configuration
when reported (``resolve``). So a cached result answers every output format and every
fixable / unfixable / unsafe-fixes setting without parsing the file again.

Importing this module is cheap (no LibCST): a run answered from the cache resolves fixes
with it.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import replace
from typing import List, Optional

from torchdevlint.findings import Finding
from torchdevlint.fixes.model import EditLocation, Fix, FixOptions

# Every fix a plan builds, safe or not, for every rule: what the cache stores.
EVERY_FIX = FixOptions(unsafe=True)

_NEWLINE = re.compile(r"\r\n|\r|\n")  # LibCST's lines, so rows match the findings' lines


def attach_located_fixes(result, text: Optional[str] = None) -> None:
    """Give the findings of a freshly linted ``FileResult`` (tree still there) every fix their
    plans build, with ``located`` edits. ``text``: the source the module was parsed from, if
    the caller has it (else it is generated from the tree). A failing fix builder costs the
    fixes, not the findings."""
    if result.module is None or not any(f.fix is not None for f in result.findings):
        return
    from torchdevlint.fixes.applier import attach_fixes  # the tree is there: LibCST is loaded
    try:
        attach_fixes(result, EVERY_FIX, text=text)
    except Exception:  # a bug in one rule's fix must not hide the file's findings
        result.findings = [replace(f, fix=None, available_fix=None) for f in result.findings]
        return
    if result.split_source is not None:
        text = result.split_source
    elif text is None:
        text = result.module.code
    starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]
    notebook = result.notebook
    for finding in result.findings:
        fix = finding.available_fix
        if fix is not None:
            fix.located = tuple(_located(edit, text, starts, notebook) for edit in fix.edits)


def _located(edit, text: str, starts: List[int], notebook) -> EditLocation:
    row, column = _position(edit.start, text, starts)
    end_row, end_column = _position(edit.end, text, starts)
    cell = None
    content = edit.text
    if notebook is not None:  # rows of the notebook's program -> rows of one cell
        # In a cell indented as a whole (or with >>> prompts), columns count what IPython
        # takes off each line, and the lines an edit starts give it back.
        prefix = notebook.prefix(row)
        if prefix and column == 1 and edit.start == edit.end and content.endswith("\n"):
            # whole lines inserted before a line: before its prefix, each with its own
            content = re.sub(r"^(?=[^\r\n])", prefix, content, flags=re.MULTILINE)
        else:
            if prefix:
                content = re.sub(r"(\r\n|\r|\n)(?=[^\r\n])|(\r\n|\r|\n)$",
                                 lambda m: m.group(0) + prefix, content)
            column += notebook.shift(row)
            end_column += notebook.shift(end_row)
        cell, row = notebook.locate(row)
        end_cell, end_row = notebook.locate(end_row)
        if end_cell != cell:  # ends at the start of the next cell: the end of this one
            end_row, end_column = _cell_end(notebook, cell)
    return EditLocation(content, row, column, end_row, end_column, cell)


def _position(offset: int, text: str, starts: List[int]):
    line = bisect.bisect_right(starts, offset)
    return line, offset - starts[line - 1] + 1


def _cell_end(notebook, number: int):
    source = next((cell.source for cell in notebook.cells if cell.number == number), "")
    lines = _NEWLINE.split(source)
    return len(lines), len(lines[-1]) + 1


def resolve(findings: List[Finding], options: FixOptions) -> List[Finding]:
    """The findings with their fixes as ``options`` (one file's configuration) allow them:
    none for a rule that is not fixable, ``applicable`` (``[*]``) only where plain ``--fix``
    applies it."""
    out = []
    for finding in findings:
        fix: Optional[Fix] = finding.available_fix
        if fix is not None:
            if not options.allows(replace(fix, safe=True)):
                finding = replace(finding, available_fix=None)
            elif fix.applicable != options.allows(fix):
                finding = replace(finding, available_fix=replace(fix, applicable=not fix.applicable))
        out.append(finding)
    return out
