"""What a fix is: text edits on the source of one pass, with a safety and a description."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field, replace
from typing import FrozenSet, List, Optional, Tuple

from torchdevlint.torch_version import DEFAULT as DEFAULT_TORCH_VERSION


@dataclass(frozen=True)
class Edit:
    """Replace ``source[start:end]`` with ``text`` (``start == end``: an insertion)."""

    start: int
    end: int
    text: str
    # An insertion that no other insertion may share its offset with (the module prelude:
    # two different preludes would both add ``import torch``); others there keep fix order.
    exclusive: bool = False

    @property
    def is_insertion(self) -> bool:
        return self.start == self.end


class FixPlan:
    """What a rule knows, at the finding, about how to fix it: the payload a ``Violation``
    carries. ``build`` turns it into a ``Fix`` against the source of the current pass (None:
    no fix here). Each rule's plans live in the rule's module, next to its check, so that a
    rule and its fix are one unit (a plan several rules share, ``fixes.context.EachItem``,
    lives beside the edit helpers); the applier only calls ``build``."""

    def build(self, finding, ctx) -> Optional["Fix"]:  # (Finding, FixContext)
        raise NotImplementedError


@dataclass
class Fix:
    code: str
    safe: bool
    description: str  # what the fix does, for --show-fixes and the docs
    edits: Tuple[Edit, ...]
    line: int = 0  # the finding's position in the pass that produced the fix
    column: int = 0
    # Whether plain ``--fix`` (with the configured unsafe-fixes) applies it: what ``[*]`` and
    # ``"fix_available"`` report. An unsafe fix is still shown by its safety.
    applicable: bool = True
    # The edits in the file's own rows and columns (``fixes.locate``), for reports: they
    # outlive the source the offsets of ``edits`` count in (the cache keeps only these).
    located: Tuple["EditLocation", ...] = ()


@dataclass
class BuiltFix(FixPlan):
    """A fix built while its tree was alive: an element of a huge literal is analysed apart
    and its tree dropped before the next one (``engine._analyse_split``), long before a report
    asks for fixes."""

    fix: Fix

    def build(self, finding, ctx) -> Optional[Fix]:
        return replace(self.fix)  # (each report sets its own ``applicable``)


@dataclass(frozen=True)
class EditLocation:
    """An edit as reports show it (ruff's JSON ``content``, ``location``, ``end_location``):
    1-based rows and character columns; in a notebook, rows count in ``cell``."""

    content: str
    row: int
    column: int
    end_row: int
    end_column: int
    cell: Optional[int] = None


@dataclass(frozen=True)
class FixOptions:
    """Which fixes to apply: ``unsafe`` also applies unsafe ones; ``fixable`` (code prefixes,
    None: every rule) and ``unfixable`` limit the rules whose fixes are applied."""

    unsafe: bool = False
    fixable: Optional[FrozenSet[str]] = None
    unfixable: FrozenSet[str] = frozenset()
    # The Python version whose syntax the file must be (None: the newest LibCST parses); it
    # travels here because the fix loop lints every pass.
    target: Optional[Tuple[int, int]] = None
    # The torch version the fixes write code for (``torch-version``); it travels with the
    # lint of every pass, whose analysis the fix builders (and the messages) read it from.
    torch_version: Tuple[int, int] = DEFAULT_TORCH_VERSION
    # False: ``# noqa`` comments silence nothing (``--ignore-noqa``), in the lint of every pass.
    apply_noqa: bool = True

    def allows(self, fix: Fix) -> bool:
        if not fix.safe and not self.unsafe:
            return False
        if self.fixable is not None and not fix.code.startswith(tuple(self.fixable)):
            return False
        return not (self.unfixable and fix.code.startswith(tuple(self.unfixable)))


@dataclass(frozen=True)
class AppliedFix:
    """A fix that was applied; line and column are those of its finding in the pass that
    applied it (earlier passes may have shifted lines)."""

    code: str
    safe: bool
    description: str
    line: int
    column: int


@dataclass
class FixResult:
    """The outcome of fixing one file: plain data (picklable, no syntax trees)."""

    path: str
    original: str  # decoded source
    fixed: str  # the source after fixing (== original when nothing changed)
    encoding: str = "utf-8"
    findings: list = field(default_factory=list)  # remaining Findings (fix payloads dropped)
    applied: List[AppliedFix] = field(default_factory=list)
    error: Optional[object] = None  # a Finding for a file that could not be analysed or fixed
    internal_error: bool = False
    passes: int = 0
    # Findings left with an unsafe fix that --unsafe-fixes would apply (ruff's "hidden fixes")
    hidden: int = 0

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


# Every fix a plan builds, safe or not, for every rule: what the cache stores.
EVERY_FIX = FixOptions(unsafe=True)

_NEWLINE = re.compile(r"\r\n|\r|\n")  # LibCST's lines, so rows match the findings' lines


def place_edits(findings: list, text: str, notebook=None) -> None:
    """Set the ``located`` edits of each finding's ``available_fix``: its edits (offsets in
    ``text``) in ``text``'s rows and columns, or, for a notebook's program, in its cells'."""
    starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]
    for finding in findings:
        fix = finding.available_fix
        if fix is not None:
            fix.located = tuple(_located(edit, text, starts, notebook) for edit in fix.edits)


def _located(edit: Edit, text: str, starts: List[int], notebook) -> EditLocation:
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
