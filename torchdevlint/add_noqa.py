"""``--add-noqa``: a ``# noqa: CODE`` comment for every current finding, as ruff's
``--add-noqa`` does, so that a team can switch the linter on over a large codebase and fix the
findings later.

Where the comment goes. Every front end (``noqa.py``, flake8) searches for a ``# noqa`` in the
group of physical lines the tokenizer joins: lines continued with a backslash, and the lines
a multi-line string spans (each line of a bracketed call or list is a group of its own). Only
the last line of a group can end in a comment (the others end inside a string or with a
backslash), so the directive goes there: on the finding's own line in the usual case, after
the closing quotes of a multi-line string, after the last line of a backslash continuation.

What it writes. A line without a comment gets ``  # noqa: CODES`` (trailing whitespace
dropped, as ruff does); a line with another comment gets it after that comment. An existing
``# noqa: CODES`` on the line is extended instead: its codes and the new ones, sorted and
deduplicated, other tools' codes kept, the text around the codes untouched
(``# noqa: E501`` becomes ``# noqa: E501, TDL001``). A blanket ``# noqa`` already silences
everything. Line endings (CRLF too) and the encoding are kept. The result is checked: it must
still parse, and each finding must now be silenced (a line whose directive would not take,
because the same group holds an earlier ``# noqa`` inside a string, is left as it was). A
second run adds nothing.

API:

- ``add_noqa(source, findings)``: ``source`` with a directive for each ``(line, code)``;
  returns a ``NoqaResult`` (the new source, how many lines got a directive, the findings that
  could not be silenced).
- ``add_noqa_to_line(source, line, code)``: the same for one finding, returning the new
  source (unchanged when the finding is already silenced). ``line`` is the finding's 1-based
  line; the directive may land on a later line, as above. For an editor's "Disable TDLxxx for
  this line" action.
- ``add_noqa_to_data(data, shown, findings)``: a file's bytes (a notebook by its ``.ipynb``
  name, findings in cell coordinates), for the CLI.
"""

from __future__ import annotations

import ast
import codecs
import re
import sys
import tokenize
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, TextIO, Tuple

from torchdevlint import noqa
from torchdevlint.findings import READ_ERROR, ExitCode, Finding, internal_error, unreadable

_PHYSICAL_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# The end of a ``codes`` group of ``noqa.NOQA_INLINE``: the separators it swallows after the
# last code.
_CODES_TAIL = re.compile(r"(?P<listed>.*?)(?P<tail>[,\s]*)\Z", re.DOTALL)
_CODE_SEPARATOR = re.compile(r"[,\s]")


UNSILENCED = ("no noqa comment can silence this finding: the first `# noqa` of its line, inside "
              "a string, is the one every front end reads")


class NoqaError(Exception):
    """Adding the directives would have broken the file (a bug: the file is left alone)."""


@dataclass(frozen=True)
class NoqaResult:
    source: str
    added: int  # lines that got a directive or more codes in one
    unsilenced: Tuple[Tuple[int, str], ...] = ()  # (line, code) no comment could silence


def add_noqa(source: str, findings: Iterable[Tuple[int, str]]) -> NoqaResult:
    """``source`` with a ``# noqa`` directive for each ``(line, code)`` that no directive
    silences yet (see the module's docstring for where and how)."""
    lines = _PHYSICAL_LINE.findall(source)
    plain = noqa.split_lines(source)  # the lines every front end tokenizes
    index = noqa.NoqaIndex(plain)
    todo = sorted({(line, code) for line, code in findings
                   if 0 < line <= len(lines) and not index.suppressed(code, line)})
    if not todo:
        return NoqaResult(source, 0)
    last_of, comments = _groups_and_comments(plain)
    wanted: Dict[int, Set[str]] = {}
    for line, code in todo:
        wanted.setdefault(min(last_of.get(line, line), len(lines)), set()).add(code)
    edited = list(lines)
    for number, codes in wanted.items():
        edited[number - 1] = _with_codes(lines[number - 1], comments.get(number), codes)
    # A directive takes only if it is the group's first ``# noqa`` (a string may hold one).
    after = noqa.NoqaIndex(noqa.split_lines("".join(edited)))
    unsilenced = tuple((line, code) for line, code in todo if not after.suppressed(code, line))
    for line, _ in unsilenced:
        target = min(last_of.get(line, line), len(lines))
        edited[target - 1] = lines[target - 1]
    result = "".join(edited)
    if result != source and not _still_parses(source, result):
        raise NoqaError("adding noqa comments would break the file's syntax")
    added = sum(1 for number in wanted if edited[number - 1] != lines[number - 1])
    return NoqaResult(result, added, unsilenced)


def add_noqa_to_line(source: str, line: int, code: str) -> str:
    """``source`` with ``code`` added to the ``# noqa`` that silences a finding on ``line``
    (1-based), created where the linter and flake8 honour it; unchanged if already silenced."""
    return add_noqa(source, [(line, code)]).source


def _groups_and_comments(lines: List[str]) -> Tuple[Dict[int, int], Dict[int, Tuple[int, str]]]:
    """Each line's group's last line, and each line's comment (column, text)."""
    tokens = noqa.tokens_of(lines)
    if tokens is None:  # then each line is searched alone, and parsing checks the result
        return {}, {}
    last_of: Dict[int, int] = {}
    for low, high in noqa.line_groups(tokens, len(lines)):
        for number in range(low, high + 1):
            last_of[number] = high
    comments = {token.start[0]: (token.start[1], token.string) for token in tokens
                if token.type == tokenize.COMMENT}
    return last_of, comments


def _with_codes(line: str, comment: Optional[Tuple[int, str]], codes: Set[str]) -> str:
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    if comment is not None:
        column, text = comment
        match = noqa.NOQA_INLINE.search(text)
        if match is not None:
            if match.group("codes") is None:
                return line  # a blanket ``# noqa`` silences every code already
            start, end = match.span("codes")
            parts = _CODES_TAIL.match(match.group("codes"))
            listed = [c for c in _CODE_SEPARATOR.split(parts.group("listed")) if c]
            tail = parts.group("tail")
            # What followed the codes stays apart from them (``E501  # why`` keeps its gap).
            tail = tail.replace(",", "") or (" " if tail else "")
            merged = ", ".join(sorted(set(listed) | codes)) + tail
            text = text[:start] + merged + text[end:]
            return body[:column] + text + body[column + len(comment[1]):] + ending
    return f"{body.rstrip()}  # noqa: {', '.join(sorted(codes))}{ending}"


def _still_parses(before: str, after: str) -> bool:
    """False only when ``after`` does not parse and ``before`` did (a file with syntax this
    interpreter does not know cannot be checked here, and is not broken by a comment)."""
    try:
        ast.parse(after)
        return True
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        pass
    try:
        ast.parse(before)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return True
    return False


# -- files ---------------------------------------------------------------------------------


@dataclass
class FileNoqa:
    """What adding directives to one file did."""

    path: str
    added: int = 0
    data: Optional[bytes] = None  # the new contents, None when nothing changes
    unsilenced: List[Finding] = field(default_factory=list)
    errors: List[Finding] = field(default_factory=list)  # why it could not be changed
    internal_error: bool = False


def add_noqa_to_data(data: bytes, shown: str, findings: Sequence[Finding]) -> FileNoqa:
    """A file's new contents with a directive for each finding (as the linter reported them:
    in cell coordinates for a notebook, which is rewritten as ``--fix`` rewrites one)."""
    from torchdevlint.notebook import SUFFIX as NOTEBOOK_SUFFIX
    if shown.endswith(NOTEBOOK_SUFFIX):
        return _notebook(data, shown, findings)
    from torchdevlint.source import decode_source
    decoded = decode_source(data)
    result = add_noqa(decoded.text, [(f.line, f.code) for f in findings])
    outcome = FileNoqa(shown, result.added, unsilenced=_unsilenced(findings, result, lambda f: f.line))
    if result.source != decoded.text:
        outcome.data = result.source.encode(decoded.encoding)
    return outcome


def _notebook(data: bytes, shown: str, findings: Sequence[Finding]) -> FileNoqa:
    from torchdevlint.notebook import parse_notebook
    notebook = parse_notebook(data)
    first_line = {cell.number: cell.first_line for cell in notebook.cells}

    def program_line(finding: Finding) -> int:
        return first_line[finding.cell] + finding.line - 1

    result = add_noqa(notebook.program, [(program_line(f), f.code) for f in findings])
    outcome = FileNoqa(shown, result.added, unsilenced=_unsilenced(findings, result, program_line))
    if result.source != notebook.program:
        text, _ = notebook.with_program(result.source)
        bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
        outcome.data = bom + text.encode("utf-8")
    return outcome


def _unsilenced(findings: Sequence[Finding], result: NoqaResult,
                line_of: Callable[[Finding], int]) -> List[Finding]:
    missed = set(result.unsilenced)
    return [f for f in findings if (line_of(f), f.code) in missed]


def _write(path: Path, shown: str, findings: Sequence[Finding]) -> FileNoqa:
    """Add the directives to one file on disk; never raises (a failure is its diagnostic)."""
    import os
    from torchdevlint.fixer import write_atomically
    try:
        before = os.stat(path)
        data = path.read_bytes()
    except OSError as exc:
        return FileNoqa(shown, errors=[unreadable(shown, exc)])
    try:
        outcome = add_noqa_to_data(data, shown, findings)
    except Exception as exc:  # a bug in torchdevlint: this file is left as it was
        return FileNoqa(shown, errors=[internal_error(shown, "adding noqa comments to", exc)],
                        internal_error=True)
    if outcome.data is not None:
        try:
            write_atomically(path, outcome.data, before)
        except OSError as exc:
            outcome.data, outcome.added = None, 0
            outcome.errors.append(Finding(shown, 1, 1, READ_ERROR, f"cannot write file: "
                                          f"{exc.strerror or exc}; left unchanged"))
    return outcome


def run_add_noqa(files: Sequence[Path], resolver, jobs: int = 1, cache_root: Optional[Path] = None,
                 quiet: bool = False, exit_zero: bool = False, err: TextIO = sys.stderr,
                 cache_dir: Optional[Path] = None) -> int:
    """The CLI's ``--add-noqa``: lint ``files`` as a lint run does (configuration, rule
    selection, per-file-ignores, the cache under ``cache_root`` or in ``cache_dir``, ``jobs``),
    then add the directives. Diagnostics and the count go to ``err``. Exit code: 0, or 1 when
    a file could not be read, parsed or written, or a finding could not be silenced; 2 when
    torchdevlint failed."""
    from torchdevlint.cache import cache_maker
    from torchdevlint.runner import lint_with_settings

    added = changed = 0
    reported = internal = False
    make_cache = cache_maker(cache_root, cache_dir) if cache_root is not None else None
    for result in lint_with_settings(files, resolver, jobs=jobs, make_cache=make_cache):
        problems: List[Finding] = [result.error] if result.error is not None else []
        internal = internal or result.internal_error
        if result.findings and result.error is None:
            outcome = _write(Path(result.path), result.path, result.findings)
            internal = internal or outcome.internal_error
            problems.extend(outcome.errors)
            problems.extend(replace(finding, message=UNSILENCED) for finding in outcome.unsilenced)
            if outcome.data is not None:
                added += outcome.added
                changed += 1
        for problem in problems:
            print(problem.format(), file=err)
        reported = reported or bool(problems)
    if not quiet:
        where = f" in {changed} file{'s' if changed != 1 else ''}" if changed else ""
        print(f"Added {added} noqa directive{'s' if added != 1 else ''}{where}.", file=err)
    return ExitCode.of_run(reported, internal, exit_zero)
