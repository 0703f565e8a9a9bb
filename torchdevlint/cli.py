"""The ``torchdevlint`` command line.

Exit codes: 0 clean, 1 findings (or files that could not be analysed), 2 usage or internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Iterator, List, Optional, Sequence

from torchdevlint import __version__
from torchdevlint.docs import rule_doc
from torchdevlint.engine import FileResult, lint_bytes
from torchdevlint.findings import PARSER_ERROR, READ_ERROR, Finding
from torchdevlint.rules import ALL_RULES, RULES_BY_CODE, UnknownCodeError, select_rules

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

# Directories never entered when recursing (ruff's defaults); files named explicitly are linted.
DEFAULT_EXCLUDES = frozenset(
    """
    .bzr .direnv .eggs .git .git-rewrite .hg .ipynb_checkpoints .mypy_cache .nox .pants.d
    .pyenv .pytest_cache .pytype .ruff_cache .svn .tox .venv .vscode __pypackages__ _build
    buck-out build dist node_modules site-packages venv __pycache__ .torchdevlint_cache
    """.split()
)
SOURCE_SUFFIXES = (".py", ".pyi")


class UsageError(Exception):
    pass


def _codes(values: Optional[List[str]]) -> List[str]:
    codes: List[str] = []
    for value in values or ():
        codes.extend(part.strip() for part in value.split(",") if part.strip())
    return codes


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchdevlint",
        description="Find PyTorch device-management bugs: discarded tensor moves, hard-coded "
                    "CUDA devices, torch.load without map_location, unmoved batches.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files or directories to lint (directories are searched for *.py); "
                             "default: the current directory")
    parser.add_argument("--select", action="append", metavar="CODES",
                        help="comma-separated code prefixes to enable (default: TDL, all rules)")
    parser.add_argument("--ignore", action="append", metavar="CODES",
                        help="comma-separated code prefixes to disable")
    parser.add_argument("--explain", metavar="CODE", help="print a rule's documentation and exit")
    parser.add_argument("--list-rules", action="store_true", help="list the rules and exit")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="print findings only, no summary")
    parser.add_argument("--version", action="version", version=f"torchdevlint {__version__}")
    return parser


def iter_python_files(paths: Sequence[str]) -> Iterator[Path]:
    """Files to lint, in a stable order; raises UsageError for a path that does not exist."""
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            yield path
        elif path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDES and not d.endswith(".egg-info"))
                for name in sorted(files):
                    if name.endswith(SOURCE_SUFFIXES[:1]):
                        yield Path(root) / name
        else:
            raise UsageError(f"{raw}: no such file or directory")


def display_path(path: Path) -> str:
    text = str(path)
    return text[2:] if text.startswith("./") else text


def lint_path(path: Path, rules) -> FileResult:
    shown = display_path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return FileResult(shown, error=Finding(shown, 1, 1, READ_ERROR,
                                               f"cannot read file: {exc.strerror or exc}"))
    try:
        return lint_bytes(data, shown, rules)
    except Exception as exc:  # a bug in torchdevlint must not take the whole run down
        result = FileResult(shown, error=Finding(
            shown, 1, 1, PARSER_ERROR,
            f"internal error while analysing this file ({type(exc).__name__}: {exc}); "
            f"please report it"))
        result.internal_error = True
        return result


def _list_rules() -> str:
    width = max(len(rule.name) for rule in ALL_RULES)
    return "\n".join(f"{rule.code}  {rule.name:<{width}}  {rule.summary}" for rule in ALL_RULES)


def _summary(findings: List[Finding], errors: List[Finding], files: int) -> str:
    if not findings and not errors:
        return f"All checks passed! ({files} file{'s' if files != 1 else ''} checked)"
    parts = []
    if findings:
        counts = {}
        for finding in findings:
            counts[finding.code] = counts.get(finding.code, 0) + 1
        detail = ", ".join(f"{code}: {n}" for code, n in sorted(counts.items()))
        parts.append(f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} ({detail})")
    if errors:
        parts.append(f"{len(errors)} file{'s' if len(errors) != 1 else ''} could not be analysed")
    return "; ".join(parts) + f" in {files} file{'s' if files != 1 else ''} checked."


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors and 0 on --help/--version
        return int(exc.code or 0)
    out = sys.stdout
    try:
        if args.list_rules:
            print(_list_rules(), file=out)
            return EXIT_CLEAN
        if args.explain:
            code = args.explain.strip().upper()
            if code not in RULES_BY_CODE:
                raise UsageError(f"unknown rule code {args.explain!r}; known: {', '.join(RULES_BY_CODE)}")
            print(rule_doc(code), file=out)
            return EXIT_CLEAN
        try:
            rules = select_rules(_codes(args.select) or ["TDL"], _codes(args.ignore))
        except UnknownCodeError as exc:
            raise UsageError(f"unknown rule code or prefix {exc.args[0]!r} in --select/--ignore") from None
        files = list(iter_python_files(args.paths or ["."]))
    except UsageError as exc:
        print(f"torchdevlint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR

    findings: List[Finding] = []
    errors: List[Finding] = []
    internal = False
    for path in files:
        result = lint_path(path, rules)
        for finding in result.findings:
            print(finding.format(), file=out)
        findings.extend(result.findings)
        if result.error is not None:
            print(result.error.format(), file=out)
            errors.append(result.error)
            internal = internal or result.internal_error
    if not args.quiet:
        print(_summary(findings, errors, len(files)), file=out)
    if internal:
        return EXIT_ERROR
    return EXIT_FINDINGS if findings or errors else EXIT_CLEAN


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
