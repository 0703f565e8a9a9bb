"""Every rule's own VALID/INVALID examples (Fixit's style): the programs a rule documents as
correct stay silent, in a lint as it runs and with the prefilters off (so the rule's check
itself is silent, not only the prefilter that may spare it the file), and the
programs it documents as wrong are flagged exactly where it says. A fixable rule's invalid
examples get a fix that removes the finding and leaves code that parses."""
from __future__ import annotations

import ast

import pytest

from torchdevlint.applier import fix_source
from torchdevlint.engine import lint_source
from torchdevlint.fixes import FixOptions
from torchdevlint.rules import ALL_RULES

VALID = [(rule, code) for rule in ALL_RULES for code in rule.valid]
INVALID = [(rule, code, where) for rule in ALL_RULES for code, where in rule.invalid]


def test_every_rule_has_examples_of_both_kinds():
    for rule in ALL_RULES:
        assert rule.valid and rule.invalid, f"{rule.code} documents no VALID/INVALID examples"


@pytest.mark.parametrize("rule,code", VALID, ids=[f"{r.code}-valid-{i}" for i, (r, _) in enumerate(VALID)])
def test_valid_example_stays_silent_with_and_without_the_prefilter(rule, code):
    for prefilter in (True, False):
        result = lint_source(code, "example.py", [rule], prefilter=prefilter)
        assert result.error is None and result.findings == [], prefilter


@pytest.mark.parametrize("rule,code,where", INVALID,
                         ids=[f"{r.code}-invalid-{i}" for i, (r, _, _) in enumerate(INVALID)])
def test_invalid_example_is_flagged_where_it_says(rule, code, where):
    result = lint_source(code, "example.py", [rule])
    assert result.error is None
    assert [(f.line, f.column) for f in result.findings] == list(where)
    assert {f.code for f in result.findings} == {rule.code}


@pytest.mark.parametrize("rule", [r for r in ALL_RULES if r.fixable], ids=lambda r: r.code)
def test_a_fixable_rule_fixes_one_of_its_invalid_examples(rule):
    fixed_any = False
    for code, _ in rule.invalid:
        result = fix_source(code, "example.py", [rule], FixOptions(unsafe=True))
        assert result.error is None
        if result.changed:
            fixed_any = True
            ast.parse(result.fixed)
            assert lint_source(result.fixed, "example.py", [rule]).findings == []
    assert fixed_any, f"{rule.code} says it is fixable, but none of its examples gets a fix"
