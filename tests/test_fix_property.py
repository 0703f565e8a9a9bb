"""Property: on any valid Python program, linting never raises and --fix output parses."""
from __future__ import annotations

import ast
from typing import Optional

import hypothesmith
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from torchdevlint.engine import lint_source
from torchdevlint.applier import fix_source
from torchdevlint.fixes import FixOptions
from torchdevlint.rules import ALL_RULES

# Code every rule fixes, appended so that the fixes run next to arbitrary generated code.
BUGGY = '''
import torch
from torch.utils.data import DataLoader
x = torch.ones(2)
x.cuda()
y = torch.zeros(2, device="cuda")
state = torch.load("w.pt")


def train(model, loader: DataLoader, device):
    model = model.to(device)
    for inputs, labels in loader:
        model(inputs)
'''

PROGRAMS = hypothesmith.from_grammar().filter(lambda s: "\x00" not in s)

# Hypothesis starts from the smallest programs, which are only blank lines and comments, and
# a generated `from __future__` import cannot follow BUGGY: such examples are discarded with
# assume(), so that each test runs its check on this many programs that hold statements.
EXAMPLES = 40
# Discarded examples do not count: hypothesis generates others until it has EXAMPLES, or
# gives up after many discards. The tests check that it did not give up early.
MIN_CHECKED = 30
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _statements(source: str) -> Optional[int]:
    """How many top-level statements ``source`` has; None when it is not valid Python."""
    try:
        return len(ast.parse(source).body)
    except (SyntaxError, ValueError):
        return None


def _check(source: str):
    result = lint_source(source, "generated.py", ALL_RULES)
    assert not result.internal_error
    # Generated code rarely holds what a rule's prefilter looks for: without the prefilter
    # every rule's check runs on it.
    unfiltered = lint_source(source, "generated.py", ALL_RULES, prefilter=False)
    assert not unfiltered.internal_error
    fixed = fix_source(source, "generated.py", ALL_RULES, FixOptions(unsafe=True))
    assert not fixed.internal_error, fixed.error
    if fixed.error is None:
        ast.parse(fixed.fixed)
    return fixed


def test_lint_and_fix_on_generated_programs():
    checked = []

    @SETTINGS
    @given(PROGRAMS)
    def run(source):
        assume(_statements(source))  # valid Python with at least one statement
        _check(source)
        checked.append(source)

    run()
    assert len(set(checked)) >= MIN_CHECKED, f"only {len(set(checked))} programs were checked"


def test_fix_on_generated_programs_with_fixable_code():
    checked = []

    @SETTINGS
    @given(PROGRAMS, st.booleans())
    def run(source, before):
        # Generated code before or after code that every rule fixes.
        combined = BUGGY + "\n" + source if not before else source + "\n" + BUGGY
        assume(_statements(source))
        # e.g. a generated `from __future__` import that must come first
        assume(_statements(combined) is not None)
        assert _check(combined).changed, "BUGGY's findings were not fixed"
        checked.append((source, before))

    run()
    assert len(set(checked)) >= MIN_CHECKED, f"only {len(set(checked))} programs were checked"
    assert {before for _, before in checked} == {False, True}
