"""Writing results: findings, file diagnostics and the summary."""

from __future__ import annotations

from typing import List, TextIO

from torchdevlint.findings import Finding


def summary(findings: List[Finding], errors: List[Finding], files: int) -> str:
    plural = lambda n, word: f"{n} {word}{'s' if n != 1 else ''}"  # noqa: E731
    if not findings and not errors:
        return f"All checks passed! ({plural(files, 'file')} checked)"
    parts = []
    if findings:
        counts: dict = {}
        for finding in findings:
            counts[finding.code] = counts.get(finding.code, 0) + 1
        detail = ", ".join(f"{code}: {n}" for code, n in sorted(counts.items()))
        parts.append(f"Found {plural(len(findings), 'finding')} ({detail})")
    if errors:
        parts.append(f"{plural(len(errors), 'file')} could not be analysed")
    return "; ".join(parts) + f" in {plural(files, 'file')} checked."


class TextReporter:
    """``path:line:col: CODE message`` per finding as results arrive, then a summary."""

    def __init__(self, stream: TextIO, quiet: bool = False) -> None:
        self.stream = stream
        self.quiet = quiet

    def file_done(self, findings: List[Finding], error) -> None:
        for finding in findings:
            print(finding.format(), file=self.stream)
        if error is not None:
            print(error.format(), file=self.stream)

    def finish(self, findings: List[Finding], errors: List[Finding], files: int) -> None:
        if not self.quiet:
            print(summary(findings, errors, files), file=self.stream)
