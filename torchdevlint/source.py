"""Turning file bytes into source text, with one clear error for anything that is not Python."""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass


class SourceError(Exception):
    """The input is not decodable Python source; ``str(err)`` is the user-facing reason."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class DecodedSource:
    text: str
    encoding: str  # as detected by tokenize ("utf-8", "utf-8-sig" when a BOM is present, ...)


def decode_source(data: bytes) -> DecodedSource:
    # NUL bytes decode; Python's parser then rejects them (E999), as flake8 reports them.
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # bad coding cookie
        raise SourceError(f"cannot determine the file's encoding: {exc.msg}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        line = data[: getattr(exc, "start", 0)].count(b"\n") + 1
        raise SourceError(f"not valid {encoding} text: {exc.reason if hasattr(exc, 'reason') else exc}",
                          line=line) from None
    return DecodedSource(text=text, encoding=encoding)
