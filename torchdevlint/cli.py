"""The ``torchdevlint`` command line.

Exit codes: 0 clean, 1 findings (or files that could not be analysed), 2 usage or internal error.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional, Sequence

from torchdevlint import __version__
from torchdevlint.cache import Cache, project_root
from torchdevlint.docs import rule_doc
from torchdevlint.findings import Finding
from torchdevlint.output import TextReporter
from torchdevlint.parallel import default_jobs
from torchdevlint.progress import Progress
from torchdevlint.rules import ALL_RULES, RULES_BY_CODE, UnknownCodeError, select_rules
from torchdevlint.runner import UsageError, iter_python_files, lint_files

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(values: Optional[List[str]]) -> List[str]:
    codes: List[str] = []
    for value in values or ():
        codes.extend(part.strip() for part in value.split(",") if part.strip())
    return codes


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of jobs, got {text!r}")
    return value


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
    parser.add_argument("--jobs", "-j", type=_positive_int, default=None, metavar="N",
                        help="lint files in N processes (default: the number of cores)")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the result cache (.torchdevlint_cache/ at "
                             "the project root)")
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

    cache = None
    if not args.no_cache:
        cache = Cache(project_root(args.paths or ["."]), [rule.code for rule in rules])
        if not cache.prepare():
            cache = None  # an unwritable project: lint without a cache
    # Never mixed into machine-readable output; only the default text format shows it.
    progress = Progress.for_stream(sys.stderr, len(files),
                                   enabled=getattr(args, "format", "text") == "text")
    reporter = TextReporter(out, quiet=args.quiet)
    findings: List[Finding] = []
    errors: List[Finding] = []
    internal = False
    for result in lint_files(files, rules, jobs=args.jobs or default_jobs(), cache=cache):
        if result.findings or result.error is not None:
            progress.clear()
        reporter.file_done(result.findings, result.error)
        progress.advance(len(result.findings))
        findings.extend(result.findings)
        if result.error is not None:
            errors.append(result.error)
            internal = internal or result.internal_error
    progress.clear()
    reporter.finish(findings, errors, len(files))
    if internal:
        return EXIT_ERROR
    return EXIT_FINDINGS if findings or errors else EXIT_CLEAN


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
