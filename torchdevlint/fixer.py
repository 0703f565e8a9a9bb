"""``--fix`` and ``--diff`` over files: fix each file, write it atomically or print a diff.

``fix_file`` is the per-file unit (a module-level function taking and returning plain data, so
a parallel runner can send it to worker processes); ``run_fix`` is the CLI's loop over files.
"""

from __future__ import annotations

import difflib
import functools
import errno
import os
import stat
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, TextIO, Tuple

from torchdevlint.applier import fix_bytes, fix_source
from torchdevlint.atomicio import replace_file
from torchdevlint.findings import (PARSER_ERROR, READ_ERROR, ExitCode, Finding, internal_error,
                                   unreadable)
from torchdevlint.fixes import FixOptions, FixResult
from torchdevlint.notebook import SUFFIX as NOTEBOOK_SUFFIX, NotebookError, displayed_filter, \
    is_python_notebook, parse_notebook
from torchdevlint.output import Reporter, RunReport, TextReporter
from torchdevlint.rules import DEFAULT_RULES, RULES_BY_CODE
from torchdevlint.parallel import run_per_file
from torchdevlint.runner import display_path, lint_data


@dataclass
class FileFix:
    """What fixing one file did."""

    path: str
    result: FixResult
    written: bool = False
    diff: bytes = b""  # the unified diff (``--diff``), empty when nothing changes
    # a diagnostic when the fixed file could not be written; the findings still count
    write_error: Optional[Finding] = None

    @property
    def findings(self) -> List[Finding]:
        return self.result.findings

    @property
    def errors(self) -> List[Finding]:
        return [e for e in (self.result.error, self.write_error) if e is not None]


def fix_file(path: Path, rules: Sequence[type] = DEFAULT_RULES, options: FixOptions = FixOptions(),
             write: bool = True, diff: bool = False) -> FileFix:
    """Fix one file; with ``write`` replace it atomically, with ``diff`` compute the patch.
    Never raises: a failure becomes the file's diagnostic."""
    shown = display_path(path)
    try:
        data = path.read_bytes()
        before = os.stat(path)
    except OSError as exc:
        return FileFix(shown, FixResult(shown, "", "", error=unreadable(shown, exc)))
    try:
        result = fix_data(data, shown, rules, options)
    except Exception as exc:  # a bug in torchdevlint must not take the whole run down
        result = FixResult(shown, "", "", error=internal_error(shown, "fixing", exc),
                           internal_error=True)
        return FileFix(shown, result)
    outcome = FileFix(shown, result)
    if not result.changed:
        return outcome
    try:
        new_data = result.fixed.encode(result.encoding)
    except UnicodeEncodeError as exc:
        outcome.write_error = Finding(shown, 1, 1, READ_ERROR,
                                      f"cannot write fixed file: not encodable as "
                                      f"{result.encoding}: {exc.reason}")
        return outcome
    if diff:
        outcome.diff = unified_diff(data, new_data, diff_name(path))
    if write:
        try:
            write_atomically(path, new_data, before)
            outcome.written = True
        except OSError as exc:
            outcome.write_error = Finding(shown, 1, 1, READ_ERROR,
                                          f"cannot write fixed file: {exc.strerror or exc}; "
                                          f"left unchanged")
    return outcome


def fix_data(data: bytes, shown: str, rules: Sequence[type] = DEFAULT_RULES,
             options: FixOptions = FixOptions()) -> FixResult:
    """Fix a file's contents; a notebook (by its .ipynb name) is fixed as one program and only
    the cells whose code changed are rewritten."""
    if shown.endswith(NOTEBOOK_SUFFIX):
        return fix_notebook(data, shown, rules, options)
    return fix_bytes(data, shown, rules, options)


def fix_notebook(data: bytes, shown: str, rules: Sequence[type] = DEFAULT_RULES,
                 options: FixOptions = FixOptions()) -> FixResult:
    try:
        notebook = parse_notebook(data)
    except NotebookError as exc:
        return FixResult(shown, "", "", error=Finding(shown, 1, 1, READ_ERROR, str(exc)))
    text = notebook.text
    if not is_python_notebook(notebook):
        return FixResult(shown, text, text)
    # A cell's last expression is displayed by Jupyter: its move is not discarded, so not fixed.
    fixed = fix_source(notebook.program, shown, rules, options,
                       finding_filter=lambda program, found: displayed_filter(program, found))
    if fixed.error is not None:
        error = notebook.to_cells(fixed.error) if not fixed.internal_error else fixed.error
        return FixResult(shown, text, text, error=error, internal_error=fixed.internal_error)
    result = FixResult(shown, text, text, applied=fixed.applied, passes=fixed.passes,
                       hidden=fixed.hidden)
    if fixed.changed:
        try:
            result.fixed, _ = notebook.with_program(fixed.fixed)
        except NotebookError as exc:
            result.error = Finding(shown, 1, 1, PARSER_ERROR,
                                   f"autofix failed, file left unchanged: {exc}; please report it")
            result.internal_error = True
            result.applied = []
            return result
    # What is left, in the cells of the notebook as written.
    remaining = lint_data(result.fixed.encode("utf-8"), shown, rules, options.target,
                          options.torch_version)
    result.findings = [replace(f, fix=None) for f in remaining.findings]
    return result


def write_atomically(path: Path, data: bytes, before: Optional[os.stat_result] = None) -> None:
    """Replace the file's contents through a temporary file and a rename, keeping its mode;
    a symlink keeps pointing at the file it points at. Refuses a read-only file and a file
    that changed since it was read."""
    target = os.path.realpath(path)
    current = os.stat(target)
    # no write bit for anyone: read-only even for root, who may write anything
    if not os.access(target, os.W_OK) or not current.st_mode & 0o222:
        raise PermissionError(errno.EACCES, "file is read-only")
    if before is not None and (current.st_mtime_ns, current.st_size) != \
            (before.st_mtime_ns, before.st_size):
        raise OSError(errno.EAGAIN, "file changed while it was being fixed")
    replace_file(target, data, mode=stat.S_IMODE(current.st_mode),
                 prefix=f".{os.path.basename(target)}.", suffix=".tdl-fix", durable=True)


def diff_name(path: Path) -> str:
    """The file name in diff headers: relative paths as ``./path``, which ``patch -p0`` reads
    as is and ``git apply`` (which strips one leading component) reads as ``path``."""
    text = str(path)
    if os.path.isabs(text) or text.startswith(("./", "../")):
        return text
    return "./" + text


def unified_diff(old: bytes, new: bytes, name: str) -> bytes:
    encoded = os.fsencode(name)
    lines = list(difflib.diff_bytes(difflib.unified_diff, old.splitlines(keepends=True),
                                    new.splitlines(keepends=True), encoded, encoded, n=3))
    out = []
    for line in lines:
        out.append(line)
        if not line.endswith(b"\n"):  # the file's last line has no newline
            out.append(b"\n\\ No newline at end of file\n")
    return b"".join(out)


# -- the CLI's loop -----------------------------------------------------------------------


@dataclass
class _Fixed:
    """What --fix / --diff changed, beside what the run reports (``RunReport``)."""

    by_file: Dict[str, Dict[str, int]] = field(default_factory=dict)  # path -> code -> count
    hidden: int = 0  # unsafe fixes --unsafe-fixes would apply

    @property
    def count(self) -> int:
        return sum(sum(codes.values()) for codes in self.by_file.values())


def _fix_planned(item: Tuple[Path, Sequence[type], FixOptions], write: bool, diff: bool) -> FileFix:
    path, rules, options = item
    return fix_file(path, rules, options, write=write, diff=diff)


def _fix_crashed(item: Tuple[Path, Sequence[type], FixOptions], reason: str) -> FileFix:
    shown = display_path(item[0])
    error = Finding(shown, 1, 1, PARSER_ERROR,
                    f"internal error: the process fixing this file died ({reason}); "
                    f"left unchanged, please report it")
    return FileFix(shown, FixResult(shown, "", "", error=error, internal_error=True))


def run_fix(files: Iterable[Path], plan: Callable[[Path], Tuple[Sequence[type], FixOptions]],
            diff: bool, show_fixes: bool, quiet: bool, out: TextIO = sys.stdout,
            err: TextIO = sys.stderr, reporter: Optional[Reporter] = None,
            exit_zero: bool = False, jobs: int = 1, exit_non_zero_on_fix: bool = False,
            fix_only: bool = False) -> int:
    """``--fix`` (write files) or ``--diff`` (print a patch, write nothing). Exit code, as
    ruff's: with --fix, 0 when nothing is left to report, else 1; with --diff, 1 when there
    is a change to make, else 0, whatever findings no fix removes; ``fix_only``
    (--fix-only), the findings left are neither reported nor counted. Files that could not
    be analysed count as findings (1) and torchdevlint failing on a file gives 2.

    ``plan`` gives each file its rules and fix options (from its configuration).
    ``reporter``: how the findings left are reported (default: concise text); with a
    machine-readable format the fix report and summary go to ``err`` so that ``out`` holds
    only that format.
    Files are fixed on ``jobs`` processes by the same runner as linting (``run_per_file``):
    a worker that dies costs only its own file, which is left unchanged."""
    files = list(files)
    fixed = _Fixed()
    if reporter is None:
        reporter = TextReporter(out, quiet=quiet)
    formatted = not isinstance(reporter, TextReporter)
    run = RunReport(reporter, len(files))
    planned = [(path, *plan(path)) for path in files]
    worker = functools.partial(_fix_planned, write=not diff, diff=diff)
    for outcome in run_per_file(worker, planned, jobs, on_crash=_fix_crashed):
        fixed.hidden += outcome.result.hidden
        applied = outcome.result.applied if (outcome.written or outcome.diff) else []
        for fix in applied:
            codes = fixed.by_file.setdefault(outcome.path, {})
            codes[fix.code] = codes.get(fix.code, 0) + 1
        if diff:  # the patch is the output; what is left is counted, errors go to ``err``
            if outcome.diff:
                out.flush()
                out.buffer.write(outcome.diff) if hasattr(out, "buffer") else \
                    out.write(outcome.diff.decode("utf-8", "replace"))
                out.flush()
            for error in outcome.errors:
                print(error.format(), file=err)
        run.file_done([] if fix_only else outcome.findings, outcome.errors,
                      outcome.result.internal_error, show=not diff)
    report = err if diff or formatted else out
    if formatted and not fix_only:
        run.finish()
    if show_fixes and fixed.by_file:
        print(fixes_report(fixed.by_file, would=diff), file=report)
    if not quiet and fixed.count:
        verb = "Would fix" if diff else "Fixed"
        plural = "s" if fixed.count != 1 else ""
        print(f"{verb} {fixed.count} finding{plural} in {len(fixed.by_file)} "
              f"file{'s' if len(fixed.by_file) != 1 else ''}.", file=report)
        if fixed.hidden:
            print(hidden_fixes_hint(fixed.hidden), file=report)
    elif not quiet and fixed.hidden:  # (and after a clean run, nothing: as ruff)
        print(f"No findings {'would be ' if diff else ''}fixed "
              f"({hidden_fixes_hint(fixed.hidden)[:-1]}).", file=report)
    if not diff and not formatted and not fix_only:
        run.finish()  # the text summary comes last, after what was fixed
    if diff:  # a change to make fails the run; the findings no fix removes do not
        return ExitCode.of_run(bool(fixed.by_file or run.errors), run.internal, exit_zero)
    # --exit-non-zero-on-fix: a change made fails the run too
    return run.exit_code(exit_zero, changed=exit_non_zero_on_fix and bool(fixed.by_file))


def hidden_fixes_hint(count: int) -> str:
    """ruff's words for the unsafe fixes that were left alone."""
    return (f"{count} hidden fix{'es' if count != 1 else ''} can be enabled with the "
            f"`--unsafe-fixes` option.")


def fixes_report(fixed: Dict[str, Dict[str, int]], would: bool = False) -> str:
    count = sum(sum(codes.values()) for codes in fixed.values())
    lines = [f"{'Would fix' if would else 'Fixed'} {count} finding{'s' if count != 1 else ''}:"]
    for path, codes in fixed.items():
        lines.append(f"- {path}:")
        for code, number in sorted(codes.items()):
            lines.append(f"    {number} x {code} ({RULES_BY_CODE[code].name})")
    return "\n".join(lines)
