"""Property: on any valid Python program, linting never raises and --fix output parses."""
from __future__ import annotations

import ast

import hypothesmith
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torchdevlint.engine import lint_source
from torchdevlint.fixes import FixOptions, fix_source
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


def _check(source: str) -> None:
    result = lint_source(source, "generated.py", ALL_RULES)
    assert not result.internal_error
    fixed = fix_source(source, "generated.py", ALL_RULES, FixOptions(unsafe=True))
    assert not fixed.internal_error, fixed.error
    if fixed.error is None:
        ast.parse(fixed.fixed)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(PROGRAMS)
def test_lint_and_fix_on_generated_programs(source):
    _check(source)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(PROGRAMS, st.booleans())
def test_fix_on_generated_programs_with_fixable_code(source, before):
    # Generated code before or after code that every rule fixes.
    combined = BUGGY + "\n" + source if not before else source + "\n" + BUGGY
    try:
        ast.parse(combined)
    except SyntaxError:
        return  # e.g. a generated `from __future__` import that must come first
    _check(combined)
