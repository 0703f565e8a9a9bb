"""The ``torchdevlint`` command line.

Exit codes: 0 clean, 1 findings (or files that could not be analysed), 2 usage or internal error.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional, Sequence

from torchdevlint import __version__
from torchdevlint.docs import rule_doc
from torchdevlint.findings import Finding
from torchdevlint.output import TextReporter
from torchdevlint.rules import ALL_RULES, RULES_BY_CODE, UnknownCodeError, select_rules
from torchdevlint.runner import UsageError, iter_python_files, lint_files

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


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
    parser.add_argument("--fix", action="store_true",
                        help="apply safe fixes and rewrite the files; findings that remain are "
                             "still reported")
    parser.add_argument("--unsafe-fixes", action="store_true",
                        help="with --fix or --diff, also apply fixes that may change behaviour")
    parser.add_argument("--diff", action="store_true",
                        help="print a unified diff of what --fix would change and write nothing")
    parser.add_argument("--show-fixes", action="store_true",
                        help="with --fix or --diff, list what was fixed, per file and rule")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="print findings only, no summary")
    parser.add_argument("--version", action="version", version=f"torchdevlint {__version__}")
    return parser


def _list_rules() -> str:
    width = max(len(rule.name) for rule in ALL_RULES)
    return "\n".join(f"{rule.code}  {rule.name:<{width}}  {rule.summary}" for rule in ALL_RULES)


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

    if args.fix or args.diff:
        from torchdevlint.fixer import run_fix
        from torchdevlint.fixes import FixOptions
        return run_fix(files, rules, FixOptions(unsafe=args.unsafe_fixes), diff=args.diff,
                       show_fixes=args.show_fixes, quiet=args.quiet, out=out)

    reporter = TextReporter(out, quiet=args.quiet)
    findings: List[Finding] = []
    errors: List[Finding] = []
    internal = False
    for result in lint_files(files, rules):
        reporter.file_done(result.findings, result.error)
        findings.extend(result.findings)
        if result.error is not None:
            errors.append(result.error)
            internal = internal or result.internal_error
    reporter.finish(findings, errors, len(files))
    if internal:
        return EXIT_ERROR
    return EXIT_FINDINGS if findings or errors else EXIT_CLEAN


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
