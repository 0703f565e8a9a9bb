"""What a rule is: a small class with its code, its message and a check over the analysis."""

from __future__ import annotations

import ast
import string

from dataclasses import dataclass, field
from typing import Callable, ClassVar, FrozenSet, Iterator, Optional, Tuple, Union

import libcst as cst

from torchdevlint.analysis import Analysis, source_of  # noqa: F401 (rules quote with it)
from torchdevlint.fixes.model import FixPlan
# (the prefilter helpers live apart, so that the prefilter runs without LibCST)
from torchdevlint.rules.prefilter import ast_statements  # noqa: F401
# (what required_text patterns are written with)
from torchdevlint.textsearch import CUDA_TENSOR_TYPE_TEXT, TOKEN_GAP, method_call_text  # noqa: F401


@dataclass(frozen=True)
class Message:
    """One kind of finding of a rule, as data: its text with named fields (``{name}``), which
    the report site fills (``MESSAGE(name=...)``). A rule declares its kinds as class
    attributes; ``Rule.messages()`` lists them, and tests/test_rule_messages.py checks that
    every finding's message is one of its rule's, filled."""

    template: str

    def __call__(self, **fields: object) -> str:
        return self.template.format(**fields)

    def fields(self) -> Tuple[str, ...]:
        return tuple(name for _, name, _, _ in string.Formatter().parse(self.template) if name)


@dataclass
class Violation:
    """A finding before positions are known: the node it points at and its message."""

    node: cst.CSTNode
    message: str
    fix: Optional[FixPlan] = field(default=None)
    # what the finding is about, where that is a part of ``node`` (TDL011: the CPU operand of
    # the call it reports): a rule's deference asks about it (``engine.DEFERENCES``)
    subject: Optional[cst.CSTNode] = field(default=None)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, as in ruff
    summary: ClassVar[str]  # one line, for --list-rules
    # Prefilter: a file whose text this pattern (or each of these patterns) does not match
    # cannot hold a finding of this rule, so it is not parsed at all when only such rules are
    # selected. It must never be narrower than ``check``: a wrong prefilter loses findings.
    required_text: ClassVar[Union[str, Tuple[str, ...]]]

    # Second prefilter, for front ends that already hold Python's ``ast`` of the file (flake8
    # hands it to plugins): ``could_report_in(tree, source)`` is False when the rule cannot report in
    # it. The same contract as ``required_text``; None when the rule has no such test.
    could_report_in: ClassVar[Optional[Callable[[ast.AST, str], bool]]] = None

    # The ast prefilter as data: the rule reports only in a file that calls one of these names
    # (the callee's last name, or a ``from X import NAME as ALIAS`` alias of one), checked
    # against the one index of the file's ast that every ast prefilter reads
    # (``prefilter.passes_ast_prefilter``), before ``could_report_in``.
    required_calls: ClassVar[Tuple[str, ...]] = ()

    # The analysis facts the check and the fix ask for (``torchdevlint.analysis.FACTS``), as
    # Fixit's METADATA_DEPENDENCIES: a file builds only what its selected rules declare, and
    # asking for an undeclared fact raises (the tests run every rule, so a missing
    # declaration cannot ship).
    facts: ClassVar[FrozenSet[str]] = frozenset()

    # Whether some findings carry a ``FixPlan`` (``--list-rules``); which
    # fixes are safe is said by each plan's ``build`` and documented on the rule's page.
    fixable: ClassVar[bool] = False

    # Whether the rule runs when nothing names it: False for advice (a slower but correct
    # pattern) rather than a bug. Such an opt-in rule runs only where a selector names its exact
    # code (``--select TDL009``, ``--extend-select TDL009``, ``select``/``extend-select`` in the
    # configuration, flake8's ``--select``/``--extend-select``); prefixes (``TDL``, ``ALL``)
    # leave it off. ``config.resolve_codes`` and the flake8 plugin apply it.
    default_enabled: ClassVar[bool] = True

    # Fixit's VALID/INVALID: small programs the rule must leave alone (each one passes the
    # prefilter, so the check itself is what stays silent) and programs it must flag, with the
    # (line, column) of each finding. tests/test_rule_examples.py runs them for every rule.
    valid: ClassVar[Tuple[str, ...]] = ()
    invalid: ClassVar[Tuple[Tuple[str, Tuple[Tuple[int, int], ...]], ...]] = ()

    @classmethod
    def messages(cls) -> Tuple[Tuple[str, Message], ...]:
        """The kinds of finding the rule declares: (attribute name, message), in name order."""
        found = {name: value for klass in reversed(cls.__mro__)
                 for name, value in vars(klass).items() if isinstance(value, Message)}
        return tuple(sorted(found.items()))

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        raise NotImplementedError
