"""Commands around linting: ``rule``, ``--list-rules``, ``--show-settings``, ``--show-files``
and ``--watch``, as ruff users know them.

Kept apart from ``cli`` so that the lint path imports none of it; and like ``cli``, importable
without LibCST (``--list-rules`` and ``rule`` read the registry, not the rule classes).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable, Optional, Sequence, TextIO

from torchdevlint.findings import ExitCode
from torchdevlint.rules.registry import ALL_RULES, RULES_BY_CODE


class UnknownRule(ValueError):
    pass


def find_rule(key: str):
    """A rule by its code (any case) or its name (``unmoved-batch``)."""
    text = key.strip()
    rule = RULES_BY_CODE.get(text.upper())
    if rule is None:
        rule = next((r for r in ALL_RULES if r.name == text.lower()), None)
    if rule is None:
        raise UnknownRule(f"unknown rule {key!r}; known: "
                          f"{', '.join(f'{r.code} ({r.name})' for r in ALL_RULES)}")
    return rule


def _rule_record(rule, explanation: Optional[str] = None) -> dict:
    record = {"code": rule.code, "name": rule.name, "summary": rule.summary,
              "default_enabled": rule.default_enabled, "fixable": rule.fixable}
    if explanation is not None:
        record["explanation"] = explanation
    return record


def list_rules(output_format: str = "concise") -> str:
    """A table of the rules: code, name, whether it runs by default (``opt-in``: only when its
    exact code or name is selected), whether ``--fix`` can fix it, summary. JSON as records."""
    if output_format == "json":
        return json.dumps([_rule_record(rule) for rule in ALL_RULES], indent=2)
    width = max(len(rule.name) for rule in ALL_RULES)
    rows = [("CODE", "NAME", "ENABLED", "FIX", "SUMMARY")] + [
        (rule.code, rule.name, "default" if rule.default_enabled else "opt-in",
         "fix" if rule.fixable else "-", rule.summary) for rule in ALL_RULES]
    return "\n".join(f"{code:<6}  {name:<{width}}  {enabled:<7}  {fix:<3}  {summary}"
                     for code, name, enabled, fix, summary in rows)


def rule_command(argv: Sequence[str], out: TextIO) -> int:
    """``torchdevlint rule CODE|NAME`` / ``rule --all``: the rules' documentation, as ruff's
    ``rule`` prints it (text: the rule pages; json: records with the page as "explanation")."""
    from torchdevlint.docs import rule_doc

    parser = argparse.ArgumentParser(
        prog="torchdevlint rule",
        description="Print a rule's documentation (by code or name), or every rule's.")
    parser.add_argument("rule", nargs="?", metavar="RULE",
                        help="a rule's code (TDL004) or name (unmoved-batch)")
    parser.add_argument("--all", action="store_true", help="every rule")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.all == (args.rule is not None):
        print("torchdevlint rule: error: give a rule's code or name, or --all", file=sys.stderr)
        return ExitCode.ERROR
    try:
        rules = list(ALL_RULES) if args.all else [find_rule(args.rule)]
    except UnknownRule as exc:
        print(f"torchdevlint rule: error: {exc}", file=sys.stderr)
        return ExitCode.ERROR
    if args.output_format == "json":
        records = [_rule_record(rule, rule_doc(rule.code)) for rule in rules]
        print(json.dumps(records if args.all else records[0], indent=2), file=out)
    else:
        print("\n\n".join(rule_doc(rule.code) for rule in rules), file=out)
    return ExitCode.CLEAN


# -- --show-files / --show-settings ---------------------------------------------------------


def show_files(paths: Sequence[str], resolver) -> str:
    """What a run would lint, after excludes, gitignore and force-exclude, one per line."""
    from torchdevlint.runner import display_path, iter_python_files
    return "\n".join(display_path(path) for path in iter_python_files(paths or ["."], resolver))


def show_settings(path: Path, resolver) -> str:
    """The configuration that applies to ``path``, value by value, with where each came from:
    the command line, the configuration file (and its key), the project's requirements, or
    the default."""
    from torchdevlint import syntax
    from torchdevlint.config import DEFAULT_EXCLUDE, absolute, read_table
    from torchdevlint.torch_version import name as torch_version_name

    settings = resolver.for_path(absolute(path))
    overrides = resolver.overrides
    config = settings.config_path
    table = (read_table(config) or {}) if config is not None else {}
    where = str(config) if config is not None else None

    def origin(cli: bool, *keys: str) -> str:
        parts = [f"{where}: {', '.join(k for k in keys if k in table)}"] \
            if any(k in table for k in keys) else []
        if cli:
            parts.append("command line")
        return "; ".join(parts) or "default"

    rules = settings.rules_for(path)
    enabled = sorted(settings.enabled)
    dropped = [code for code in enabled if code not in {rule.code for rule in rules}]
    excluded = settings.is_excluded(absolute(path))
    target = settings.target_version
    if overrides.target_version is not None:
        target_origin = "command line"
    elif "target-version" in table:
        target_origin = f"{where}: target-version"
    elif target is not None:
        target_origin = "[project] requires-python"
    else:
        target_origin = "default (the newest syntax LibCST parses)"
    exclude_origin = origin(overrides.exclude is not None or bool(overrides.extend_exclude),
                            "exclude", "extend-exclude")
    if exclude_origin != "default" and "exclude" not in table and overrides.exclude is None:
        exclude_origin += f" (added to the {len(DEFAULT_EXCLUDE)} defaults)"
    lines = [
        f"Resolved settings for: {path}",
        f"Settings path: {config if config is not None else '(none: defaults)'}",
        "",
        f"enabled rules     = {', '.join(enabled)}",
        f"    from: {origin(overrides.select is not None or bool(overrides.extend_select) or bool(overrides.ignore) or overrides.require_accelerator is not None, 'select', 'extend-select', 'ignore', 'extend-ignore', 'require-accelerator')}",
        f"rules for this file = {', '.join(rule.code for rule in rules)}"
        + (f" (not {', '.join(dropped)}: per-file-ignores or the project)" if dropped else ""),
        f"    from: {origin(overrides.per_file_ignores is not None or bool(overrides.extend_per_file_ignores), 'per-file-ignores', 'extend-per-file-ignores')}",
        f"fixable           = {', '.join(sorted(settings.fixable))}",
        f"    from: {origin(overrides.fixable is not None or bool(overrides.unfixable), 'fixable', 'unfixable')}",
        f"unsafe-fixes      = {str(settings.unsafe_fixes).lower()}",
        f"    from: {origin(overrides.unsafe_fixes is not None, 'unsafe-fixes')}",
        f"fix               = {str(settings.fix).lower()}",
        f"    from: {origin(False, 'fix')}",
        f"exclude           = {', '.join(glob.pattern for glob in settings.exclude)}",
        f"    from: {exclude_origin}",
        f"    this file: {'excluded' if excluded else 'not excluded'}",
        f"respect-gitignore = {str(settings.respect_gitignore).lower()}",
        f"    from: {origin(overrides.respect_gitignore is not None, 'respect-gitignore')}",
        f"force-exclude     = {str(settings.force_exclude).lower()}",
        f"    from: {origin(overrides.force_exclude is not None, 'force-exclude')}",
        f"target-version    = {syntax.target_name(target) if target is not None else 'none'}",
        f"    from: {target_origin}",
        f"torch-version     = {torch_version_name(settings.torch_version)}",
        f"    from: {settings.torch_version_origin}",
    ]
    return "\n".join(lines)


# -- --watch --------------------------------------------------------------------------------


# What ruff's watch mode writes before each run (the ``clearscreen`` crate's terminfo
# sequence for xterm and its kin): home, clear the screen, clear the scrollback.
CLEAR_SCREEN = "\x1b[H\x1b[2J\x1b[3J"


def clear_screen(out: TextIO = sys.stdout) -> None:
    """Clear the terminal before a watch run, as ruff does; nothing when ``out`` is not a
    terminal (a pipe or a file keeps every run's output)."""
    isatty = getattr(out, "isatty", None)
    if isatty is not None and isatty():
        out.write(CLEAR_SCREEN)
        out.flush()


def watch(paths: Sequence[str], run_once: Callable[[], int], err: TextIO = sys.stderr,
          clear: Callable[[], None] = clear_screen) -> int:
    """Lint, then lint again whenever a Python file, a notebook or a pyproject.toml under
    ``paths`` changes (each run reads the configuration afresh), until interrupted; the
    screen is cleared before each run (``clear``). The file events come from ``watchfiles``
    (Rust's notify: inotify, FSEvents...), an optional extra."""
    try:
        import watchfiles
    except ImportError:
        from torchdevlint.docs import install_extra
        print(f"torchdevlint: error: --watch needs watchfiles: {install_extra('watch')}",
              file=err)
        return ExitCode.ERROR
    from torchdevlint.runner import DIRECTORY_SUFFIXES

    targets = [str(Path(p)) for p in (paths or ["."])]
    missing = [p for p in targets if not Path(p).exists()]
    if missing:
        print(f"torchdevlint: error: {', '.join(missing)}: no such file or directory", file=err)
        return ExitCode.ERROR

    def relevant(change, path: str) -> bool:
        return path.endswith((*DIRECTORY_SUFFIXES, "pyproject.toml")) and \
            "/.torchdevlint_cache/" not in path.replace("\\", "/")

    print("torchdevlint: watching for file changes (Ctrl-C stops)", file=err, flush=True)
    # The watcher starts on the generator's first step (an empty set after rust_timeout) and
    # keeps collecting events while a run lints: a change made meanwhile is not lost.
    events = watchfiles.watch(*targets, watch_filter=relevant, raise_interrupt=False,
                              yield_on_timeout=True, rust_timeout=100)
    if next(events, None) is None:
        return ExitCode.CLEAN  # interrupted at once
    clear()
    run_once()
    print("torchdevlint: waiting for changes", file=err, flush=True)
    for changes in events:
        if not changes:
            continue  # a timeout: nothing changed
        names = sorted({Path(path).name for _, path in changes})
        clear()
        print(f"torchdevlint: changed: {', '.join(names[:5])}"
              f"{' ...' if len(names) > 5 else ''}", file=err, flush=True)
        run_once()
        print("torchdevlint: waiting for changes", file=err, flush=True)
    return ExitCode.CLEAN
