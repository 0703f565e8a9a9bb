"""The ``torchdevlint`` command line.

Exit codes: 0 clean, 1 findings (or files that could not be analysed), 2 usage or internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import List, Optional, Sequence

from torchdevlint import __version__, syntax
from torchdevlint.cache import Cache, project_root
from torchdevlint.docs import rule_doc
from torchdevlint.findings import ExitCode
from torchdevlint.config import ConfigError, Overrides, Resolver, absolute, parse_per_file_ignores
from torchdevlint.engine import FileResult
from torchdevlint.output import FORMATS, RunReport, make_reporter
from torchdevlint.parallel import default_jobs
from torchdevlint.progress import Progress
from torchdevlint.rules import ALL_RULES, RULES_BY_CODE
from torchdevlint.runner import UsageError, display_path, force_excluded, guarded, iter_python_files, \
    lint_data, lint_with_settings



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
                        help="files or directories to lint (directories are searched for *.py, "
                             "*.pyi and *.ipynb); `-` reads standard input; default: the "
                             "current directory")
    parser.add_argument("--select", action="append", metavar="CODES",
                        help="comma-separated code prefixes to enable, replacing the "
                             "configuration's choice (default: ALL)")
    parser.add_argument("--ignore", action="append", metavar="CODES",
                        help="comma-separated code prefixes to disable")
    _add_configuration_arguments(parser)
    _add_output_arguments(parser)
    parser.add_argument("--explain", metavar="CODE", help="print a rule's documentation and exit")
    parser.add_argument("--list-rules", action="store_true", help="list the rules and exit")
    parser.add_argument("--fix", action="store_true",
                        help="apply safe fixes and rewrite the files; findings that remain are "
                             "still reported")
    parser.add_argument("--unsafe-fixes", action=argparse.BooleanOptionalAction, default=None,
                        help="with --fix or --diff, also apply fixes that may change behaviour "
                             "(default: the unsafe-fixes setting, off)")
    parser.add_argument("--diff", action="store_true",
                        help="print a unified diff of what --fix would change and write nothing")
    parser.add_argument("--show-fixes", action="store_true",
                        help="with --fix or --diff, list what was fixed, per file and rule")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="print findings only, no summary")
    parser.add_argument("--jobs", "-j", type=_positive_int, default=None, metavar="N",
                        help="lint files in N processes (default: the number of cores)")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the result cache (.torchdevlint_cache/ at "
                             "the project root)")
    parser.add_argument("--version", action="version", version=f"torchdevlint {__version__}")
    return parser


def _add_configuration_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags that override [tool.torchdevlint] (docs/configuration.md), named as in ruff."""
    group = parser.add_argument_group("configuration (overrides pyproject.toml)")
    group.add_argument("--config", metavar="PATH", type=Path,
                       help="use this pyproject.toml for every file instead of the closest one")
    group.add_argument("--isolated", action="store_true",
                       help="ignore all configuration files")
    group.add_argument("--extend-select", action="append", metavar="CODES",
                       help="code prefixes to enable in addition to the selected ones")
    group.add_argument("--extend-ignore", action="append", metavar="CODES",
                       help="code prefixes to disable (same as --ignore)")
    group.add_argument("--exclude", action="append", metavar="PATTERNS",
                       help="comma-separated globs of files and folders to skip, replacing the "
                            "configured and default ones")
    group.add_argument("--extend-exclude", action="append", metavar="PATTERNS",
                       help="comma-separated globs to skip in addition to the others")
    group.add_argument("--per-file-ignores", action="append", metavar="GLOB:CODES",
                       help="ignore codes in matching files, replacing the configured table")
    group.add_argument("--extend-per-file-ignores", action="append", metavar="GLOB:CODES",
                       help="ignore codes in matching files, in addition to the configuration")
    group.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                       help="skip files git ignores when searching directories (default: on)")
    group.add_argument("--force-exclude", action=argparse.BooleanOptionalAction, default=None,
                       help="apply exclusions to files named on the command line too "
                            "(useful under pre-commit)")
    group.add_argument("--target-version", metavar="VERSION", choices=syntax.TARGET_NAMES,
                       help="the Python version whose syntax files must be: "
                            f"{', '.join(syntax.TARGET_NAMES)} (default: the lowest that "
                            "[project] requires-python allows, else the newest LibCST parses)")
    group.add_argument("--fixable", action="append", metavar="CODES",
                       help="code prefixes whose findings --fix may fix (default: ALL)")
    group.add_argument("--unfixable", action="append", metavar="CODES",
                       help="code prefixes whose findings --fix must leave alone")


def _add_output_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("output")
    group.add_argument("--output-format", choices=FORMATS, default="text",
                       help="text (default), json, sarif (SARIF 2.1.0) or github (workflow "
                            "annotations)")
    group.add_argument("--output-file", "-o", metavar="PATH", type=Path,
                       help="write the report to this file instead of standard output")
    group.add_argument("--statistics", action="store_true",
                       help="print the number of findings per code instead of the findings")
    group.add_argument("--exit-zero", action="store_true",
                       help="exit 0 even when there are findings (usage and internal errors "
                            "still exit 2)")
    group.add_argument("--stdin-filename", metavar="NAME",
                       help="the name of the file read from standard input (with `-` as the "
                            "path): used in the report, for configuration and per-file-ignores, "
                            "and to recognise a notebook")


def _overrides(args: argparse.Namespace) -> Overrides:
    def patterns(values: Optional[List[str]]) -> List[str]:
        return _codes(values)  # the same comma-separated, repeatable shape

    return Overrides(
        select=_codes(args.select) if args.select is not None else None,
        extend_select=_codes(args.extend_select),
        ignore=_codes(args.ignore) + _codes(args.extend_ignore),
        exclude=patterns(args.exclude) if args.exclude is not None else None,
        extend_exclude=patterns(args.extend_exclude),
        per_file_ignores=(parse_per_file_ignores(args.per_file_ignores)
                          if args.per_file_ignores is not None else None),
        extend_per_file_ignores=parse_per_file_ignores(args.extend_per_file_ignores or ()),
        respect_gitignore=args.respect_gitignore,
        force_exclude=args.force_exclude,
        fixable=_codes(args.fixable) if args.fixable is not None else None,
        unfixable=_codes(args.unfixable),
        unsafe_fixes=getattr(args, "unsafe_fixes", None),
        target_version=args.target_version,
    )


def _reads_stdin(args: argparse.Namespace) -> bool:
    if "-" in args.paths:
        if len(args.paths) > 1:
            raise UsageError("`-` (standard input) cannot be combined with other paths")
        return True
    return not args.paths and args.stdin_filename is not None


def _lint_stdin(args: argparse.Namespace, resolver: Resolver) -> List[FileResult]:
    """Standard input, linted as if it were the file --stdin-filename names."""
    name = args.stdin_filename or "-"
    path = Path(name)
    settings = resolver.for_directory(absolute(path).parent)
    if args.stdin_filename and settings.force_exclude and force_excluded(settings, absolute(path)):
        return []
    data = sys.stdin.buffer.read()
    shown = display_path(path)
    return [guarded(lambda: lint_data(data, shown, settings.rules_for(path),
                                      settings.target_version), shown)]


def _fix_options(settings):
    from torchdevlint.fixes import FixOptions
    return FixOptions(unsafe=settings.unsafe_fixes, fixable=settings.fixable,
                      target=settings.target_version)


def _fix_plan(resolver: Resolver):
    """For --fix: each file's rules and fix options, from its configuration."""
    def plan(path: Path):
        settings = resolver.for_directory(absolute(path).parent)
        return settings.rules_for(path), _fix_options(settings)
    return plan


def _fix_stdin(args: argparse.Namespace, resolver: Resolver) -> int:
    """--fix with `-`: the fixed source goes to standard output, findings left to stderr."""
    from torchdevlint.fixer import fix_data
    name = args.stdin_filename or "-"
    path = Path(name)
    settings = resolver.for_directory(absolute(path).parent)
    data = sys.stdin.buffer.read()
    if args.stdin_filename and settings.force_exclude and force_excluded(settings, absolute(path)):
        sys.stdout.buffer.write(data)
        return ExitCode.CLEAN
    result = fix_data(data, display_path(path), settings.rules_for(path), _fix_options(settings))
    if args.diff:
        from torchdevlint.fixer import unified_diff
        sys.stdout.buffer.write(unified_diff(data, result.fixed.encode(result.encoding), name)
                                if result.changed else b"")
    else:
        sys.stdout.buffer.write(result.fixed.encode(result.encoding) if result.changed else data)
    sys.stdout.flush()
    remaining = [*result.findings, *([result.error] if result.error else [])]
    for finding in remaining:
        print(finding.format(), file=sys.stderr)
    return ExitCode.of_run(bool(remaining or (args.diff and result.changed)),
                           result.internal_error, args.exit_zero)


def _list_rules() -> str:
    """One line per rule: code, name, whether it runs by default (``opt-in``: only when its
    code is selected), whether it has fixes, summary."""
    width = max(len(rule.name) for rule in ALL_RULES)
    return "\n".join(
        f"{rule.code}  {rule.name:<{width}}  {'default' if rule.default_enabled else 'opt-in':<7}  "
        f"{'fix' if rule.fixable else '-':<3}  {rule.summary}" for rule in ALL_RULES)


def _run(argv: Optional[Sequence[str]]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors and 0 on --help/--version
        return int(exc.code or 0)
    out = sys.stdout
    try:
        if args.list_rules:
            print(_list_rules(), file=out)
            return ExitCode.CLEAN
        if args.explain:
            code = args.explain.strip().upper()
            if code not in RULES_BY_CODE:
                raise UsageError(f"unknown rule code {args.explain!r}; known: {', '.join(RULES_BY_CODE)}")
            print(rule_doc(code), file=out)
            return ExitCode.CLEAN
        resolver = Resolver(_overrides(args), config=args.config, isolated=args.isolated)
        stdin = _reads_stdin(args)
        files = [] if stdin else list(iter_python_files(args.paths or ["."], resolver))
        if args.statistics and args.output_format not in ("text", "json"):
            raise UsageError("--statistics works with --output-format text or json")
        if args.output_file is not None:
            try:
                out = open(args.output_file, "w", encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"{args.output_file}: {exc.strerror or exc}") from exc
    except (UsageError, ConfigError) as exc:
        print(f"torchdevlint: error: {exc}", file=sys.stderr)
        return ExitCode.ERROR

    if args.fix or args.diff:
        try:
            if stdin:
                return _fix_stdin(args, resolver)
            from torchdevlint.fixer import run_fix
            return run_fix(files, _fix_plan(resolver), diff=args.diff, show_fixes=args.show_fixes,
                           quiet=args.quiet, out=out, jobs=args.jobs or default_jobs(),
                           reporter=None if args.output_format == "text" and not args.statistics
                           else make_reporter(args.output_format, out, quiet=args.quiet,
                                              show_statistics=args.statistics),
                           exit_zero=args.exit_zero)
        finally:
            if out is not sys.stdout:
                out.close()

    needs_fix_details = args.statistics or args.output_format == "json"
    # (cached results carry no fixes, which JSON and --statistics report)
    use_cache = not args.no_cache and not stdin and not needs_fix_details
    root = project_root(args.paths or ["."]) if use_cache else None

    def make_cache(rules):
        cache = Cache(root, [rule.code for rule in rules])
        return cache if cache.prepare() else None  # unwritable: lint without a cache

    # Never mixed into machine-readable output; only the text format on a terminal shows it.
    progress = Progress.for_stream(sys.stderr, len(files),
                                   enabled=args.output_format == "text" and not stdin)
    try:
        run = RunReport(make_reporter(args.output_format, out, quiet=args.quiet,
                                      show_statistics=args.statistics),
                        1 if stdin else len(files), progress)
        if needs_fix_details:
            from torchdevlint.fixes.applier import attach_fixes
        if stdin:
            results = _lint_stdin(args, resolver)
        else:
            results = lint_with_settings(
                files, resolver, jobs=args.jobs or default_jobs(),
                make_cache=make_cache if use_cache else None,
                fix_options_for=_fix_options if needs_fix_details else None)
        for result in results:
            if needs_fix_details:  # (results from worker processes come with fixes resolved)
                attach_fixes(result, _fix_options(resolver.for_path(Path(result.path))))
            run.file_done(result.findings, [result.error] if result.error is not None else [],
                          result.error is not None and result.internal_error)
        run.finish()
    finally:
        if out is not sys.stdout:
            out.close()
    return run.exit_code(args.exit_zero)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The entry point: no traceback ever reaches the user."""
    try:
        code = _run(argv)
        sys.stdout.flush()  # a reader that went away shows here, not at interpreter exit
        return code
    except KeyboardInterrupt:
        print("torchdevlint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``torchdevlint . | head``): stop quietly, as a shell tool does.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return 141
    except Exception as exc:  # a bug in torchdevlint itself, outside any one file
        print(f"torchdevlint: internal error ({type(exc).__name__}: {exc}); please report it",
              file=sys.stderr)
        return ExitCode.ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
