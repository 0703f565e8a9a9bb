"""The flake8 plugin: the same findings as the CLI, in flake8's conventions.

flake8 wants 0-based columns from plugins (it prints column + 1) and applies ``# noqa``
itself with the same rules the CLI mirrors; ruff's file-level ``# ruff: noqa[: CODES]``,
which flake8 does not know, the plugin applies (unless ``--disable-noqa``). A plugin exception aborts the whole flake8 run,
so nothing may escape ``run``.

Opt-in rules (TDL009) run as under the CLI: only when flake8's ``--select`` or
``--extend-select`` (command line or configuration) names their exact code. flake8's own
decision alone would not do: its default ignore list (which lists them too) gives way to any
explicit ``--select TDL`` or ``--ignore``, where the CLI keeps them off.

The torch version (``torch-version``: which device idiom TDL002's message proposes) is
flake8's ``--torch-version`` option, else the one the command resolves for the file
(``[tool.torchdevlint]``, else the project's torch requirement), so both say the same.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

from torchdevlint import __version__, noqa
from torchdevlint.engine import gc_paused, lint_source
from torchdevlint.findings import PARSER_ERROR, READ_ERROR, Finding
from torchdevlint.project import rules_for_location
from torchdevlint.project_index import configure as configure_index, rules_for_program
from torchdevlint.source import SourceError, decode_source
from torchdevlint.rules import ALL_RULES, DEFAULT_RULES, OPT_IN_CODES
from torchdevlint import torch_version as torch_versions


def _torch_version_option(text: str) -> torch_versions.Version:
    try:
        return torch_versions.parse(text)
    except torch_versions.TorchVersionError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class TorchDevLintChecker:
    name = "torchdevlint"
    version = __version__

    # The rules to run: those on by default, plus the opt-in ones flake8's options name.
    rules: Tuple[type, ...] = tuple(DEFAULT_RULES)
    # flake8's --torch-version (None: as the command resolves it for each file)
    torch_version: Optional[torch_versions.Version] = None
    disable_noqa = False  # flake8's --disable-noqa: no ``# ruff: noqa`` either
    _resolver = None

    @classmethod
    def add_options(cls, option_manager) -> None:
        # flake8's own default: opt-in codes are ignored unless selected (``--extend-select``).
        option_manager.extend_default_ignore(sorted(OPT_IN_CODES))
        option_manager.add_option(
            "--torch-version", parse_from_config=True, default=None, type=_torch_version_option,
            help="the torch version TDL002's message proposes code for, such as 2.6 (default: "
                 "as the torchdevlint command resolves it: [tool.torchdevlint] torch-version, "
                 "else the project's torch requirement, else 2.0)")

    @classmethod
    def parse_options(cls, options) -> None:
        named = {code.strip().upper() for option in ("select", "extend_select")
                 for code in (getattr(options, option, None) or ())}
        cls.rules = tuple(rule for rule in ALL_RULES
                          if rule.default_enabled or rule.code in named)
        cls.torch_version = getattr(options, "torch_version", None)
        cls.disable_noqa = bool(getattr(options, "disable_noqa", False))
        # one flake8 run: its files do not change under it (a stat of each project suffices)
        configure_index(stamp=float("inf"))

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
        torch_version, problem = self._torch_version()
        if problem is not None:
            yield 1, 0, f"{PARSER_ERROR} {problem}", type(self)
        try:
            # flake8 reports E999 itself: no second syntax check for files the prefilter skips.
            # Only the findings are kept: the tree is freed before collections resume.
            with gc_paused():
                result = lint_source("".join(self.lines), self.filename,
                                     rules_for_program(
                                         rules_for_location(self.rules, self.filename),
                                         self.filename, self._require_accelerator()),
                                     apply_noqa=False, check_syntax=False, tree=self.tree,
                                     torch_version=torch_version)
                result.drop_tree()
        except Exception as exc:  # never abort flake8
            yield 1, 0, f"{PARSER_ERROR} torchdevlint internal error: {type(exc).__name__}: {exc}", type(self)
            return
        findings = result.findings
        if not self.disable_noqa and findings and noqa.may_exempt_file("".join(self.lines)):
            # flake8 applies its own ``# flake8: noqa``; ruff's form is the plugin's to apply
            findings = noqa.exempt_findings(
                findings, noqa.file_exemption(self.lines, flake8_form=False))
        for finding in findings:
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)
        error = result.error
        if error is not None and error.code in (PARSER_ERROR, READ_ERROR):
            # flake8 itself reports E999 for files Python cannot parse; this is the rare file
            # Python accepts and LibCST does not.
            yield error.line, error.column - 1, f"{error.code} {error.message}", type(self)

    def _torch_version(self) -> Tuple[torch_versions.Version, Optional[str]]:
        """(the torch version for this file, the configuration problem that kept it from being
        read, if any: the file is then linted for the default version)."""
        if self.torch_version is not None:
            return self.torch_version, None
        from torchdevlint.config import ConfigError, Resolver
        try:
            cls = type(self)
            if cls._resolver is None:
                cls._resolver = Resolver()
            path = Path(self.filename if self.filename not in ("", "-", "stdin") else ".")
            return cls._resolver.for_path(path).torch_version, None
        except ConfigError as exc:
            return torch_versions.DEFAULT, f"invalid torchdevlint configuration: {exc}"

    def _require_accelerator(self) -> Optional[bool]:
        """``require-accelerator`` as the command resolves it for this file (None: unset, or
        a configuration ``_torch_version`` has reported as invalid)."""
        from torchdevlint.config import ConfigError, Resolver
        try:
            if type(self)._resolver is None:
                type(self)._resolver = Resolver()
            path = Path(self.filename if self.filename not in ("", "-", "stdin") else ".")
            return type(self)._resolver.for_path(path).require_accelerator
        except ConfigError:
            return None

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
