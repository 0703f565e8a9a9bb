"""Every fixture carries its expected findings; the linter must produce exactly those."""
from __future__ import annotations

import pytest

from conftest import FIXTURES, expected_findings, fixture_files, fixture_rules
from torchdevlint.engine import lint_bytes
from torchdevlint.rules import ALL_RULES


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parts[-3]}-{p.parts[-2]}-{p.stem}")
def test_fixture_findings_match_markers(path):
    result = lint_bytes(path.read_bytes(), str(path), fixture_rules(path))
    assert result.error is None
    found = {(f.line, f.column, f.code) for f in result.findings}
    expected = expected_findings(path)
    assert found == expected, f"missing: {sorted(expected - found)}, extra: {sorted(found - expected)}"


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_every_rule_has_positive_and_negative_fixtures(rule):
    positives = list((FIXTURES / rule.code / "positive").glob("*.py"))
    negatives = list((FIXTURES / rule.code / "negative").glob("*.py"))
    assert positives and negatives
    for path in positives:
        if not path.name.endswith(".fixed.py"):
            codes = {code for _, _, code in expected_findings(path)}
            assert rule.code in codes, f"{path.name} has no {rule.code} marker"
    for path in negatives:
        assert not expected_findings(path), f"negative fixture {path.name} expects findings"


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parts[-3]}-{p.parts[-2]}-{p.stem}")
def test_a_fixture_is_linted_with_its_own_rule_only(path):
    """A fixture says what its own rule does: another rule's finding in it would be tested
    (and snapshotted) as if it were this rule's."""
    assert [rule.code for rule in fixture_rules(path)] == [path.parts[-3]]
    others = {code for _, _, code in expected_findings(path)} - {path.parts[-3]}
    assert not others, f"{path.name} expects {sorted(others)}: that belongs in their fixtures"
