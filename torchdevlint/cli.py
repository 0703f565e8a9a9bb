"""The ``torchdevlint`` command line.

Exit codes: 0 clean, 1 findings (or files that could not be analysed), 2 usage or internal error;
with --diff, as in ruff, 1 means a change to make (the findings no fix removes do not count),
and with --fix-only the findings left do not count either.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Sequence, TextIO, Tuple, Union

from torchdevlint import __version__, syntax
from torchdevlint.docs import rule_doc
from torchdevlint.findings import ExitCode
from torchdevlint.output import FORMATS, TEXT_FORMATS, RunReport, canonical_format, make_reporter
from torchdevlint.parallel import default_jobs
from torchdevlint.progress import Progress

# The configuration, the file walk and the cache are imported by the functions that lint
# (``_run`` once the arguments are read): --version and --help exit before. LibCST itself
# is imported only when a file must be analysed (torchdevlint.rules.registry).
if TYPE_CHECKING:
    from torchdevlint.config import Overrides, Resolver
    from torchdevlint.engine import FileResult



# --cache-dir's default, as ruff reads RUFF_CACHE_DIR.
CACHE_DIR_ENV = "TORCHDEVLINT_CACHE_DIR"
# --show-settings without a path: the first path linted, else the current directory.
_FIRST_PATH = Path("\0first path")


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


# The commands before the options (``torchdevlint check .``); a first argument that is no
# existing path and looks like a misspelt one is an error, not a path to lint.
COMMANDS = ("check", "rule", "server")


def _rules_text() -> str:
    """Every rule, from the registry, for --help."""
    from torchdevlint.rules.registry import ALL_RULES
    return "\n".join(f"  {rule.code}  {rule.name}{'' if rule.default_enabled else ' (opt-in)'}"
                     for rule in ALL_RULES)


def _default_selection() -> str:
    """What runs without a selection, from the registry: for --select's help."""
    from torchdevlint.rules.registry import OPT_IN_CODES
    if not OPT_IN_CODES:
        return "every rule"
    return f"every rule but the opt-in {', '.join(sorted(OPT_IN_CODES))}"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchdevlint",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Find PyTorch device-management bugs (`torchdevlint check` is the same "
                    "command).\n\nrules (`torchdevlint rule CODE` explains one; an opt-in "
                    "rule runs only\nwhere its exact code is selected):\n" + _rules_text(),
        epilog="torchdevlint server: run the language server for editors (see "
               "`torchdevlint server --help` and docs/editors.md).",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files or directories to lint (directories are searched for *.py, "
                             "*.pyi and *.ipynb); `-` reads standard input; default: the "
                             "current directory")
    parser.add_argument("--select", action="append", metavar="CODES",
                        help="comma-separated code prefixes to enable, replacing the "
                             f"configuration's choice (default: {_default_selection()})")
    parser.add_argument("--ignore", action="append", metavar="CODES",
                        help="comma-separated code prefixes to disable")
    _add_configuration_arguments(parser)
    _add_output_arguments(parser)
    parser.add_argument("--explain", metavar="RULE",
                        help="print a rule's documentation (by code or name) and exit; "
                             "`torchdevlint rule RULE` does the same")
    parser.add_argument("--list-rules", action="store_true",
                        help="list the rules (code, name, on by default or opt-in, fixable) and "
                             "exit; with --output-format json, as records")
    parser.add_argument("--show-settings", metavar="PATH", type=Path, nargs="?",
                        const=_FIRST_PATH,
                        help="print the configuration that applies to PATH (without one: to "
                             "the first path given, else the current directory), with where "
                             "each value came from, and exit")
    parser.add_argument("--show-files", action="store_true",
                        help="print the files that would be linted (after excludes and "
                             "gitignore) and exit")
    parser.add_argument("--watch", "-w", action="store_true",
                        help="lint, then lint again on every change to a Python file, notebook "
                             "or pyproject.toml (needs the `watch` extra: watchfiles)")
    parser.add_argument("--fix", action=argparse.BooleanOptionalAction, default=None,
                        help="apply safe fixes and rewrite the files; findings that remain are "
                             "still reported (default: the `fix` setting, off; --no-fix "
                             "overrides `fix = true`)")
    parser.add_argument("--fix-only", action="store_true",
                        help="apply fixes as --fix does, but neither report nor exit 1 for the "
                             "findings left (implies --fix)")
    parser.add_argument("--exit-non-zero-on-fix", action="store_true",
                        help="with --fix, exit 1 when a file was changed, even if no finding "
                             "remains (to stop a commit under pre-commit)")
    parser.add_argument("--unsafe-fixes", action=argparse.BooleanOptionalAction, default=None,
                        help="with --fix or --diff, also apply fixes that may change behaviour "
                             "(default: the unsafe-fixes setting, off)")
    parser.add_argument("--diff", action="store_true",
                        help="print a unified diff of what --fix would change and write "
                             "nothing; exit 1 when there is a change to make, else 0")
    parser.add_argument("--ignore-noqa", action="store_true",
                        help="ignore every `# noqa` comment and file-level exemption")
    parser.add_argument("--show-fixes", action="store_true",
                        help="with --fix or --diff, list what was fixed, per file and rule")
    parser.add_argument("--add-noqa", action="store_true",
                        help="add a `# noqa: CODE` comment for every finding (merged into an "
                             "existing `# noqa`) and rewrite the files, to adopt the linter on "
                             "an existing codebase")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="print findings only, no summary")
    parser.add_argument("--silent", "-s", action="store_true",
                        help="print nothing (not even findings); the exit code still says "
                             "whether there were any")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="also say, on standard error, which configuration applies, how "
                             "many files are linted, where the cache is and how long it took")
    parser.add_argument("--jobs", "-j", type=_positive_int, default=None, metavar="N",
                        help="lint files in N processes (default: the number of cores)")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the result cache (.torchdevlint_cache/ at "
                             "the project root)")
    parser.add_argument("--cache-dir", metavar="PATH", type=Path,
                        default=os.environ.get(CACHE_DIR_ENV) or None,
                        help="keep the result cache in PATH instead (default: "
                             f"${CACHE_DIR_ENV}, else .torchdevlint_cache/ at the project root)")
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
    group.add_argument("--require-accelerator", action=argparse.BooleanOptionalAction,
                       default=None,
                       help="the project runs only on machines with a GPU: hard-coded CUDA is "
                            "by design, TDL002 is off (default: the require-accelerator "
                            "setting; unset, a project with no CPU path in any file, whose "
                            "README names a GPU, is taken for GPU-only; "
                            "--no-require-accelerator keeps TDL002 on there)")
    group.add_argument("--target-version", metavar="VERSION", choices=syntax.TARGET_NAMES,
                       help="the Python version whose syntax files must be: "
                            f"{', '.join(syntax.TARGET_NAMES)} (default: the lowest that "
                            "[project] requires-python allows, else the newest LibCST parses)")
    group.add_argument("--torch-version", metavar="VERSION",
                       help="the torch version fixes write code for, such as 2.6: from 2.6 on "
                            "TDL002's fix chooses the device with torch.accelerator (default: "
                            "the lowest that the project's torch requirement allows, else 2.0)")
    group.add_argument("--fixable", action="append", metavar="CODES",
                       help="code prefixes whose findings --fix may fix (default: ALL)")
    group.add_argument("--unfixable", action="append", metavar="CODES",
                       help="code prefixes whose findings --fix must leave alone")


def _add_output_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("output")
    group.add_argument("--output-format", choices=FORMATS, default="concise",
                       help="concise (default: one line per finding, `[*]` where --fix fixes "
                            "it; `text` is its old name), full (with the source line, a caret "
                            "under the span and the fix as a diff), json, sarif (SARIF 2.1.0), "
                            "github (workflow annotations), gitlab (GitLab Code Quality) or junit "
                            "(JUnit XML). Colour on a terminal, unless NO_COLOR is set; "
                            "FORCE_COLOR forces it")
    group.add_argument("--output-file", "-o", metavar="PATH", type=Path,
                       help="write the report to this file instead of standard output")
    group.add_argument("--statistics", action="store_true",
                       help="print the number of findings per code instead of the findings "
                            "(`[*]`: --fix fixes them), then the total")
    group.add_argument("--exit-zero", action="store_true",
                       help="exit 0 even when there are findings (usage and internal errors "
                            "still exit 2)")
    group.add_argument("--stdin-filename", metavar="NAME",
                       help="the name of the file read from standard input (with `-` as the "
                            "path): used in the report, for configuration and per-file-ignores, "
                            "and to recognise a notebook")


def _overrides(args: argparse.Namespace) -> Overrides:
    from torchdevlint.config import Overrides, parse_per_file_ignores

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
        require_accelerator=args.require_accelerator,
        target_version=args.target_version,
        torch_version=args.torch_version,
    )


def _reads_stdin(args: argparse.Namespace) -> bool:
    from torchdevlint.runner import UsageError
    if "-" in args.paths:
        if len(args.paths) > 1:
            raise UsageError("`-` (standard input) cannot be combined with other paths")
        return True
    return not args.paths and args.stdin_filename is not None


def _stdin_settings(args: argparse.Namespace, resolver: Resolver):
    """Standard input's name, path and settings (those of the file --stdin-filename names),
    and whether --force-exclude excludes that file."""
    from torchdevlint.config import absolute
    from torchdevlint.runner import force_excluded
    name = args.stdin_filename or "-"
    path = Path(name)
    settings = resolver.for_directory(absolute(path).parent)
    excluded = bool(args.stdin_filename and settings.force_exclude
                    and force_excluded(settings, absolute(path)))
    return name, path, settings, excluded


def _lint_stdin(args: argparse.Namespace, resolver: Resolver,
                sources: Optional[dict] = None) -> List[FileResult]:
    """Standard input, linted as if it were the file --stdin-filename names; its contents go
    in ``sources`` under the name shown (for --output-format full)."""
    from torchdevlint.runner import display_path, guarded, lint_data
    _, path, settings, excluded = _stdin_settings(args, resolver)
    if excluded:
        return []
    data = sys.stdin.buffer.read()
    shown = display_path(path)
    if sources is not None:
        sources[shown] = data
    return [guarded(lambda: lint_data(data, shown, settings.rules_for(path),
                                      settings.target_version, settings.torch_version,
                                      apply_noqa=not args.ignore_noqa), shown)]


def _fix_plan(resolver: Resolver, apply_noqa: bool = True):
    """For --fix: each file's rules and fix options, from its configuration."""
    from torchdevlint.config import absolute

    def plan(path: Path):
        settings = resolver.for_directory(absolute(path).parent)
        return settings.rules_for(path), replace(settings.fix_options(), apply_noqa=apply_noqa)
    return plan


def _fix_stdin(args: argparse.Namespace, resolver: Resolver) -> int:
    """--fix with `-`: the fixed source goes to standard output, findings left to stderr."""
    from torchdevlint.fixer import fix_data
    from torchdevlint.runner import display_path
    name, path, settings, excluded = _stdin_settings(args, resolver)
    data = sys.stdin.buffer.read()
    if excluded:
        sys.stdout.buffer.write(data)
        return ExitCode.CLEAN
    result = fix_data(data, display_path(path), settings.rules_for(path),
                      replace(settings.fix_options(), apply_noqa=not args.ignore_noqa))
    _write_fixed_stdin(args, name, data, result)
    return _fixed_stdin_exit(args, result)


def _write_fixed_stdin(args: argparse.Namespace, name: str, data: bytes, result) -> None:
    """The fixed source (or with --diff, the change) on standard output."""
    if args.diff:
        from torchdevlint.fixer import unified_diff
        sys.stdout.buffer.write(unified_diff(data, result.fixed.encode(result.encoding), name)
                                if result.changed else b"")
    else:
        sys.stdout.buffer.write(result.fixed.encode(result.encoding) if result.changed else data)
    sys.stdout.flush()


def _fixed_stdin_exit(args: argparse.Namespace, result) -> int:
    """The findings a fix of standard input leaves, on standard error, and the exit code."""
    errors = [result.error] if result.error else []
    remaining = [] if args.fix_only else result.findings
    if not args.silent:
        for finding in [*remaining, *errors]:
            print(finding.format(), file=sys.stderr)
    # as run_fix decides: --diff fails on a change to make, --fix on what is left
    changed = result.changed and (args.diff or args.exit_non_zero_on_fix)
    return ExitCode.of_run(bool(errors or changed or (remaining and not args.diff)),
                           result.internal_error, args.exit_zero)


def _misspelt_command(arguments: Sequence[str]) -> Optional[str]:
    """The command that the first argument misspells (``chekc``: ``check``), where it is a
    plain word and no file or folder of that name exists; None otherwise (a path to lint,
    or a word like no command, which gets its E902 as any missing path does)."""
    import difflib
    import re
    word = arguments[0] if arguments else ""
    if not re.fullmatch(r"[A-Za-z][A-Za-z_-]*", word) or os.path.lexists(word):
        return None
    close = difflib.get_close_matches(word.lower(), COMMANDS, n=1, cutoff=0.6)
    return close[0] if close else None


def _verbose_log(enabled: bool):
    """``-v``: what a run says about itself on standard error (a no-op without it)."""
    def log(message: str) -> None:
        if enabled:
            print(f"torchdevlint: {message}", file=sys.stderr, flush=True)
    return log


def _answer(args: argparse.Namespace, arguments: Sequence[str]) -> Optional[int]:
    """The options that print something and exit before any configuration is read
    (--list-rules, --explain), and --watch; None for a run."""
    from torchdevlint.runner import UsageError
    if args.list_rules:
        from torchdevlint.commands import list_rules
        print(list_rules(args.output_format))
        return ExitCode.CLEAN
    if args.explain:
        from torchdevlint.commands import UnknownRule, find_rule
        try:
            rule = find_rule(args.explain)
        except UnknownRule as exc:
            raise UsageError(str(exc)) from None
        print(rule_doc(rule.code))
        return ExitCode.CLEAN
    if args.watch:
        if args.add_noqa or "-" in args.paths:
            raise UsageError("--watch cannot be combined with --add-noqa or `-` (standard "
                             "input)")
        from torchdevlint.commands import watch
        once = [a for a in arguments if a not in ("--watch", "-w")]
        return watch(args.paths, lambda: main(once))
    return None


def _answer_with(args: argparse.Namespace, resolver: Resolver) -> Optional[int]:
    """--show-settings and --show-files, which read the configuration and exit."""
    if args.show_settings is not None:
        from torchdevlint.commands import show_settings
        path = args.show_settings
        if path == _FIRST_PATH:  # ruff's --show-settings takes no path: the first one linted
            path = Path(args.paths[0]) if args.paths and args.paths[0] != "-" else Path(".")
        print(show_settings(path, resolver))
        return ExitCode.CLEAN
    if args.show_files:
        from torchdevlint.commands import show_files
        listing = show_files(args.paths, resolver)
        if listing:
            print(listing)
        return ExitCode.CLEAN
    return None


@dataclass
class _Plan:
    """What a run works on, once the arguments are checked."""

    files: List[Path]
    stdin: bool
    fixing: bool
    out: TextIO  # where the report goes: stdout, --output-file, or nowhere (--silent)


def _plan(args: argparse.Namespace, resolver: Resolver) -> _Plan:
    from torchdevlint.runner import iter_python_files
    fixing = args.fix_only or (args.fix if args.fix is not None else resolver.default().fix)
    stdin = _reads_stdin(args)
    files = [] if stdin else list(iter_python_files(args.paths or ["."], resolver))
    _check_combinations(args, fixing, stdin)
    return _Plan(files, stdin, fixing, _report_stream(args))


def _check_combinations(args: argparse.Namespace, fixing: bool, stdin: bool) -> None:
    """The options that cannot go together (a ``UsageError``); --output-format's canonical
    name."""
    from torchdevlint.runner import UsageError
    if args.add_noqa and (fixing or args.diff or stdin):
        raise UsageError("--add-noqa rewrites files: it cannot be combined with "
                         f"{'--fix' if fixing else '--diff' if args.diff else 'standard input'}")
    args.output_format = canonical_format(args.output_format)
    if args.statistics and args.output_format not in (*TEXT_FORMATS, "json"):
        raise UsageError("--statistics works with --output-format concise, full or json")


def _report_stream(args: argparse.Namespace) -> TextIO:
    """Where the report goes: standard output, --output-file, or nowhere (--silent)."""
    from torchdevlint.runner import UsageError
    out: TextIO = sys.stdout
    if args.silent:
        out = open(os.devnull, "w", encoding="utf-8")
    elif args.output_file is not None:
        try:
            out = open(args.output_file, "w", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{args.output_file}: {exc.strerror or exc}") from exc
    return out


def _run(argv: Optional[Sequence[str]]) -> int:
    """The command's steps: the command word, the arguments, the settings and the files they
    name (``_prepare``), then the run (``_run_planned``), whose result is the exit code."""
    arguments = _command(list(sys.argv[1:] if argv is None else argv))
    if not isinstance(arguments, list):
        return arguments  # another command ran (or a misspelt one was refused)
    args = _parse_arguments(arguments)
    if not isinstance(args, argparse.Namespace):
        return args  # --help, --version or a usage error
    log = _verbose_log(args.verbose)
    started = time.perf_counter()
    prepared = _prepare(args, arguments, log)
    if not isinstance(prepared, tuple):
        return prepared  # answered (--list-rules, --show-settings, ...) or a usage error
    resolver, plan = prepared
    count = len(plan.files)
    log(f"{'standard input' if plan.stdin else f'{count} file' + 's' * (count != 1)} to "
        f"{'fix' if plan.fixing else 'diff' if args.diff else 'lint'}")
    try:
        return _run_planned(args, resolver, plan, log)
    finally:
        if plan.out is not sys.stdout:
            plan.out.close()
        log(f"done in {time.perf_counter() - started:.2f} s")


def _command(arguments: List[str]) -> Union[List[str], int]:
    """The arguments of the lint command (``check``, or none named), or the exit code of
    another command that ran (``server``, ``rule``) or of a misspelt one."""
    if arguments[:1] == ["server"]:  # the language server (docs/editors.md); needs pygls
        from torchdevlint.server import main as serve
        return serve(arguments[1:])
    if arguments[:1] == ["rule"]:  # ruff's `rule`: a rule's documentation
        from torchdevlint.commands import rule_command
        return rule_command(arguments[1:], sys.stdout)
    if arguments[:1] == ["check"]:  # ruff's name for what a bare `torchdevlint` does
        return arguments[1:]
    meant = _misspelt_command(arguments)
    if meant is not None:  # as ruff says it, where a misspelt command is never a path
        print(f"torchdevlint: error: unknown command {arguments[0]!r}: did you mean "
              f"{meant!r}? (no file or folder of that name exists to lint)",
              file=sys.stderr)
        return ExitCode.ERROR
    return arguments


def _parse_arguments(arguments: List[str]) -> Union[argparse.Namespace, int]:
    """The parsed arguments, or argparse's exit code (2 on usage errors, 0 on --help or
    --version)."""
    try:
        args = build_parser().parse_args(arguments)
    except SystemExit as exc:
        return int(exc.code or 0)
    args.quiet = args.quiet or args.silent
    return args


def _prepare(args: argparse.Namespace, arguments: Sequence[str],
             log) -> Union[Tuple[Resolver, _Plan], int]:
    """The settings (the configuration under the arguments' overrides) and the run's plan
    (its files, where its report goes), or the exit code of an option answered without a
    run, or of a usage or configuration error."""
    from torchdevlint.config import ConfigError, Resolver
    from torchdevlint.runner import UsageError
    try:
        answered = _answer(args, arguments)
        if answered is not None:
            return answered
        resolver = Resolver(_overrides(args), config=args.config, isolated=args.isolated)
        log(f"configuration: {resolver.default().config_path or 'none (the defaults)'}")
        answered = _answer_with(args, resolver)
        if answered is not None:
            return answered
        return resolver, _plan(args, resolver)
    except (UsageError, ConfigError) as exc:
        print(f"torchdevlint: error: {exc}", file=sys.stderr)
        return ExitCode.ERROR


def _run_planned(args: argparse.Namespace, resolver: Resolver, plan: _Plan, log) -> int:
    """--add-noqa, --fix / --diff, or a lint run, as ``plan`` says."""
    jobs = args.jobs or default_jobs()
    root, make_cache = _cache(args, plan, log)
    if args.add_noqa:
        from torchdevlint.add_noqa import run_add_noqa
        return run_add_noqa(plan.files, resolver, jobs=jobs, cache_root=root,
                            cache_dir=args.cache_dir, quiet=args.quiet,
                            exit_zero=args.exit_zero)
    if plan.fixing or args.diff:
        return _fix(args, resolver, plan, jobs)
    return _lint(args, resolver, plan, make_cache, jobs)


def _cache(args: argparse.Namespace, plan: _Plan, log):
    """The project root the cache belongs to and what makes the cache (None, None without
    one: --no-cache, or standard input)."""
    from torchdevlint.cache import CACHE_DIR_NAME, cache_maker, project_root
    use_cache = not args.no_cache and not plan.stdin
    root = project_root(args.paths or ["."]) if use_cache else None
    if not plan.fixing and not args.diff:
        log(f"cache: {args.cache_dir or root / CACHE_DIR_NAME}" if use_cache else "cache: off")
    from torchdevlint import project_index
    # (one run: the files do not change under it, so one stat of each project is trusted)
    project_index.configure(cache_dir=args.cache_dir, use_cache=use_cache, stamp=float("inf"))
    project_index.new_run()
    return root, cache_maker(root, args.cache_dir) if use_cache else None


def _fix(args: argparse.Namespace, resolver: Resolver, plan: _Plan, jobs: int) -> int:
    """--fix or --diff, of standard input or of the plan's files."""
    if plan.stdin:
        return _fix_stdin(args, resolver)
    from torchdevlint.fixer import run_fix
    reporter = make_reporter(args.output_format, plan.out, quiet=args.quiet,
                             show_statistics=args.statistics)
    return run_fix(plan.files, _fix_plan(resolver, apply_noqa=not args.ignore_noqa),
                   diff=args.diff, show_fixes=args.show_fixes, quiet=args.quiet,
                   out=plan.out, err=plan.out if args.silent else sys.stderr, jobs=jobs,
                   reporter=reporter, exit_zero=args.exit_zero,
                   exit_non_zero_on_fix=args.exit_non_zero_on_fix, fix_only=args.fix_only)


def _lint(args: argparse.Namespace, resolver: Resolver, plan: _Plan, make_cache,
          jobs: int) -> int:
    """A lint run: every file's findings reported as they come, then the summary."""
    from torchdevlint.runner import lint_with_settings
    # Never mixed into machine-readable output; only the text format on a terminal shows it.
    progress = Progress.for_stream(sys.stderr, len(plan.files),
                                   enabled=args.output_format in TEXT_FORMATS and not plan.stdin
                                   and not args.silent)
    stdin_sources: dict = {}
    run = RunReport(make_reporter(args.output_format, plan.out, quiet=args.quiet,
                                  show_statistics=args.statistics, sources=stdin_sources),
                    1 if plan.stdin else len(plan.files), progress)
    if plan.stdin:
        results = _lint_stdin(args, resolver, stdin_sources)
    else:
        # (results come with fixes as each file's configuration allows them; cached
        # results carry their fixes, as every format and configuration needs them)
        results = lint_with_settings(
            plan.files, resolver, jobs=jobs, make_cache=make_cache,
            fix_options_for=lambda settings: replace(settings.fix_options(),
                                                     apply_noqa=not args.ignore_noqa),
            apply_noqa=not args.ignore_noqa)
    for result in results:
        if plan.stdin:
            _attach_stdin_fixes(result, resolver)
        run.file_done(result.findings, [result.error] if result.error is not None else [],
                      result.error is not None and result.internal_error)
    run.finish()
    _note_gpu_only_projects(args, plan)
    return run.exit_code(args.exit_zero)


def _note_gpu_only_projects(args: argparse.Namespace, plan: _Plan) -> None:
    """Once per run, after the summary: the projects taken for GPU-only (TDL002 off), with
    the setting that turns it back on (on standard error for machine-readable formats)."""
    from torchdevlint import project_index
    if args.quiet or args.silent:
        return
    stream = plan.out if args.output_format in TEXT_FORMATS else sys.stderr
    for root in project_index.gpu_only_roots():
        print(project_index.GPU_ONLY_NOTE.format(root=_shown_path(root)), file=stream)
    programs = project_index.gpu_only_programs()
    if programs:
        listed = "; ".join(f"{_shown_path(path)} ({why})" for path, why in programs)
        print(project_index.GPU_ONLY_PROGRAMS_NOTE.format(count=len(programs), programs=listed),
              file=stream)


def _shown_path(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _attach_stdin_fixes(result: FileResult, resolver: Resolver) -> None:
    """Standard input's findings with the fixes its configuration allows (the files' come
    so from the runner)."""
    if not any(f.fix is not None for f in result.findings):
        return
    from torchdevlint.config import absolute
    from torchdevlint.engine import attach_located_fixes
    from torchdevlint.fixes.locate import resolve
    attach_located_fixes(result)
    result.findings = resolve(result.findings, resolver.for_directory(
        absolute(Path(result.path)).parent).fix_options())


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
