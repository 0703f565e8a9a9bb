"""What a lint run produces: findings (rule violations) and file-level diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # only for the annotations: findings are plain data
    from torchdevlint.fixes.model import Fix, FixPlan


@dataclass(frozen=True)
class Finding:
    path: str
    line: int  # 1-based
    column: int  # 1-based, in characters
    code: str
    message: str
    end_line: int = 0
    end_column: int = 0
    # The rule's plan for a fix (a ``FixPlan``; it holds syntax nodes: in-process only, and
    # dropped before a result leaves a worker) ...
    fix: Optional["FixPlan"] = field(default=None, compare=False, repr=False)
    # ... and the ``Fix`` it gave, for reports that say whether a fix is available and safe
    # (``engine.attach_fixes``): plain data.
    available_fix: Optional["Fix"] = field(default=None, compare=False, repr=False)
    # Notebooks: the 1-based cell (position among all cells); line and end_line count in it.
    cell: Optional[int] = None

    @property
    def location(self) -> str:
        """``path:line:col`` or, in a notebook, ``path:cell N:line:col``."""
        cell = f"cell {self.cell}:" if self.cell is not None else ""
        return f"{self.path}:{cell}{self.line}:{self.column}"

    def format(self) -> str:
        return f"{self.location}: {self.code} {self.message}"

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.column, self.code)


def unreadable(path: str, error: OSError) -> "Finding":
    """The diagnostic for a file that could not be read, or for a directory named to lint
    that could not be listed (``runner.iter_python_files`` yields it as a path to read)."""
    import os
    if os.path.isdir(path):
        try:
            os.scandir(path).close()
        except OSError as listing:
            error = listing
        return Finding(path, 1, 1, READ_ERROR, f"cannot read directory: {error.strerror or error}")
    return Finding(path, 1, 1, READ_ERROR, f"cannot read file: {error.strerror or error}")


def internal_error(path: str, doing: str, error: BaseException) -> "Finding":
    """The diagnostic for a bug in torchdevlint met while ``doing`` (analysing, fixing) a file."""
    return Finding(path, 1, 1, PARSER_ERROR, f"internal error while {doing} this file "
                                             f"({type(error).__name__}: {error}); please report it")


# Diagnostics for input that could not be analysed. They use flake8's codes for the same
# situations (E999: the file is not valid Python, E902: it could not be read or decoded), and
# TDL999 where Python accepts the file but LibCST cannot parse it.
SYNTAX_ERROR = "E999"
READ_ERROR = "E902"
PARSER_ERROR = "TDL999"


class ExitCode(IntEnum):
    """What every front end exits with (as ruff and flake8 do)."""

    CLEAN = 0  # nothing to report
    FINDINGS = 1  # findings, or files that could not be analysed
    ERROR = 2  # a usage error or a failure of torchdevlint itself

    @classmethod
    def of_run(cls, reported: bool, internal: bool, exit_zero: bool) -> "ExitCode":
        """The one rule every front end exits by: a failure of torchdevlint beats
        ``--exit-zero``, which beats anything reported (findings, unreadable files, or with
        ``--diff`` a change to make)."""
        if internal:
            return cls.ERROR
        if exit_zero or not reported:
            return cls.CLEAN
        return cls.FINDINGS
