"""What a lint run produces: findings (rule violations) and file-level diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(frozen=True)
class Finding:
    path: str
    line: int  # 1-based
    column: int  # 1-based, in characters
    code: str
    message: str
    end_line: int = 0
    end_column: int = 0
    fix: Optional[Any] = field(default=None, compare=False, repr=False)

    def format(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.code} {self.message}"

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code)


# Diagnostics for input that could not be analysed. They use flake8's codes for the same
# situations (E999: the file is not valid Python, E902: it could not be read or decoded), and
# TDL999 where Python accepts the file but LibCST cannot parse it.
SYNTAX_ERROR = "E999"
READ_ERROR = "E902"
PARSER_ERROR = "TDL999"
