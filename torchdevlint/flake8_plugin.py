"""The flake8 plugin: the same findings as the CLI, in flake8's conventions.

flake8 wants 0-based columns from plugins (it prints column + 1) and applies ``# noqa``
itself with the same rules the CLI mirrors. A plugin exception aborts the whole flake8 run,
so nothing may escape ``run``.

Opt-in rules (TDL009) run as under the CLI: only when flake8's ``--select`` or
``--extend-select`` (command line or configuration) names their exact code. flake8's own
decision alone would not do: its default ignore list (which lists them too) gives way to any
explicit ``--select TDL`` or ``--ignore``, where the CLI keeps them off.
"""

from __future__ import annotations

import os
from typing import Iterator, List, Optional, Tuple

from torchdevlint import __version__
from torchdevlint.engine import gc_paused, lint_source
from torchdevlint.findings import PARSER_ERROR, READ_ERROR, Finding
from torchdevlint.project import rules_for_location
from torchdevlint.source import SourceError, decode_source
from torchdevlint.rules import ALL_RULES, DEFAULT_RULES, OPT_IN_CODES


class TorchDevLintChecker:
    name = "torchdevlint"
    version = __version__

    # The rules to run: those on by default, plus the opt-in ones flake8's options name.
    rules: Tuple[type, ...] = tuple(DEFAULT_RULES)

    @classmethod
    def add_options(cls, option_manager) -> None:
        # flake8's own default: opt-in codes are ignored unless selected (``--extend-select``).
        option_manager.extend_default_ignore(sorted(OPT_IN_CODES))

    @classmethod
    def parse_options(cls, options) -> None:
        named = {code.strip().upper() for option in ("select", "extend_select")
                 for code in (getattr(options, option, None) or ())}
        cls.rules = tuple(rule for rule in ALL_RULES
                          if rule.default_enabled or rule.code in named)

    def __init__(self, tree, lines: List[str], filename: str = "") -> None:
        # LibCST parses the source; flake8's ``ast`` of it (built for every plugin anyway)
        # sharpens the prefilter, so that fewer files need that parse.
        self.tree = tree
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        undecodable = self._undecodable()
        if undecodable is not None:
            yield undecodable.line, undecodable.column - 1, \
                f"{undecodable.code} {undecodable.message}", type(self)
            return
        try:
            # flake8 reports E999 itself: no second syntax check for files the prefilter skips.
            # Only the findings are kept: the tree is freed before collections resume.
            with gc_paused():
                result = lint_source("".join(self.lines), self.filename,
                                     rules_for_location(self.rules, self.filename),
                                     apply_noqa=False, check_syntax=False, tree=self.tree)
                result.drop_tree()
        except Exception as exc:  # never abort flake8
            yield 1, 0, f"{PARSER_ERROR} torchdevlint internal error: {type(exc).__name__}: {exc}", type(self)
            return
        for finding in result.findings:
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)
        error = result.error
        if error is not None and error.code in (PARSER_ERROR, READ_ERROR):
            # flake8 itself reports E999 for files Python cannot parse; this is the rare file
            # Python accepts and LibCST does not.
            yield error.line, error.column - 1, f"{error.code} {error.message}", type(self)

    def _undecodable(self) -> Optional[Finding]:
        """E902 for a file that is not text in its declared encoding (PEP 263, UTF-8 without a
        cookie: PEP 3120), as the command reports it. flake8 itself falls back to latin-1 and
        lints such a file. Only files whose decoded text could hide that (not pure ASCII, or a
        coding cookie in the first two lines) are read again."""
        head = "".join(self.lines[:2])
        if "coding" not in head and all(line.isascii() for line in self.lines):
            return None
        if self.filename in ("", "-", "stdin") or not os.path.isfile(self.filename):
            return None
        try:
            with open(self.filename, "rb") as handle:
                decode_source(handle.read())
        except OSError:
            return None  # flake8 read it: a race, nothing torchdevlint should report
        except SourceError as exc:
            return Finding(self.filename, max(exc.line, 1), max(exc.column, 1), READ_ERROR,
                           str(exc))
        return None
