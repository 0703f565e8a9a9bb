"""A one-line progress display on a terminal's stderr for long runs."""

from __future__ import annotations

import time
from typing import Optional, TextIO

# Runs shorter than this never show anything (no flicker for a pre-commit hook on 3 files).
_DELAY_S = 0.5
_INTERVAL_S = 0.1


class Progress:
    """``[ 812/2285]  35%  12 findings`` redrawn in place on ``stream``.

    Use ``Progress.for_stream`` so that it is a no-op when the stream is not a terminal.
    Call ``clear()`` before writing anything else to the same terminal.
    """

    def __init__(self, stream: Optional[TextIO], total: int) -> None:
        self.stream = stream
        self.total = total
        self.done = 0
        self.findings = 0
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._shown = False

    @classmethod
    def for_stream(cls, stream: TextIO, total: int, enabled: bool = True) -> "Progress":
        try:
            interactive = enabled and stream.isatty()
        except (AttributeError, ValueError):  # closed or not a real file
            interactive = False
        return cls(stream if interactive else None, total)

    def advance(self, findings: int = 0) -> None:
        self.done += 1
        self.findings += findings
        if self.stream is None:
            return
        now = time.monotonic()
        if now - self._start < _DELAY_S or now - self._last_draw < _INTERVAL_S:
            return
        self._last_draw = now
        width = len(str(self.total))
        percent = 100 * self.done // max(self.total, 1)
        plural = "" if self.findings == 1 else "s"
        self.stream.write(f"\r\033[K[{self.done:>{width}}/{self.total}] {percent:3d}%  "
                          f"{self.findings} finding{plural}")
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown and self.stream is not None:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._shown = False
